// Share links: the program and its settings, deflated into the URL's fragment. The fragment
// never leaves the browser (no server storage, not even in access logs), holds no uploaded
// files, and opening a link only fills the editor: nothing runs until the reader presses Run.

const PREFIX = "#p=";
const MAX_LINK = 1 << 20; // characters of fragment we try to read at all
const MAX_STATE = 4 << 20; // bytes of JSON a link may inflate to (a small link can be a bomb)

function toBase64Url(bytes) {
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(raw).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const raw = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function pipe(bytes, stream, limit) {
  const reader = new Blob([bytes]).stream().pipeThrough(stream).getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`it unpacks to more than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}

export async function link(page, state) {
  const json = new TextEncoder().encode(JSON.stringify({ v: 1, page, ...state }));
  const packed = await pipe(json, new CompressionStream("deflate-raw"), Infinity);
  return new URL(`${page === "run" ? "./" : page}${PREFIX}${toBase64Url(packed)}`, document.baseURI).href;
}

// The state a link holds for `page`, or null when there is none; throws with a reason when the
// fragment is not a link this page can read.
export async function read(page) {
  if (!location.hash.startsWith(PREFIX)) return null;
  const text = location.hash.slice(PREFIX.length);
  if (text.length > MAX_LINK) throw new Error("the link is too long");
  let state;
  try {
    const json = await pipe(fromBase64Url(text), new DecompressionStream("deflate-raw"), MAX_STATE);
    state = JSON.parse(new TextDecoder().decode(json));
  } catch (exc) {
    throw new Error(`the link is damaged (${exc.message})`);
  }
  if (!state || typeof state !== "object" || state.v !== 1 || state.page !== page) {
    throw new Error("the link is not one of this page's");
  }
  return state;
}

// Only fields of the expected type are taken from a link.
export function pick(state, types) {
  const out = {};
  for (const [key, type] of Object.entries(types)) {
    if (typeof state[key] === type) out[key] = state[key];
  }
  return out;
}
