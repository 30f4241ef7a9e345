// Calls to the API of the server that served this page. Every POST body is JSON, sent with
// Content-Type: application/json (the server refuses anything else, against cross-site forms).

// The pages live under <base>/playground/, the API at <base>/.
const BASE = new URL("../", document.baseURI);
// A server with API keys (Authorization: Bearer) gets the one typed in the key box; it is kept
// for this tab only, and never goes into a share link or a snippet.
const KEY = "sandlot-api-key";

export function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}

export function setApiKey(value) {
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}

export function headers(extra = {}) {
  const key = apiKey();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

export function url(path) {
  return new URL(path.replace(/^\//, ""), BASE).href;
}

async function answer(response, target, sent) {
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  let error = null;
  if (!response.ok) {
    const detail = data && typeof data.detail === "string" ? data.detail : text.slice(0, 2000);
    error = `HTTP ${response.status}: ${detail || response.statusText}`;
  }
  return { ok: response.ok, status: response.status, url: target, sent, data, text, error };
}

async function send(target, init, sent, { quiet = false } = {}) {
  try {
    const response = await fetch(target, init);
    if (response.status === 401 && !quiet) dispatchEvent(new CustomEvent("sandlot:unauthorized"));
    return { ...(await answer(response, target, sent)), keyed: Boolean(apiKey()) };
  } catch (exc) {
    const error = `no answer from the server (${exc.message})`;
    return { ok: false, status: 0, url: target, sent, data: null, text: "", error };
  }
}

// POST body as JSON. `sent` in the result is the exact text sent, for "copy as curl".
export function post(path, body, init = {}) {
  const sent = JSON.stringify(body);
  const sending = headers({ "Content-Type": "application/json" });
  return send(url(path), { method: "POST", headers: sending, body: sent, ...init }, sent);
}

// Whether the server takes `key`: a read that needs a key when the server has keys
// (GET /languages), sent with that key alone.
export function checkKey(key) {
  const init = { headers: { Accept: "application/json", Authorization: `Bearer ${key}` } };
  return send(url("/languages"), init, null, { quiet: true });
}

export function get(path) {
  return send(url(path), { headers: headers({ Accept: "application/json" }) }, null);
}

export function del(path) {
  return send(url(path), { method: "DELETE", headers: headers() }, null);
}

// The paths this server has, from its OpenAPI schema: pages ask before calling an endpoint
// that an older or smaller server may lack (sessions, metrics), instead of provoking a 404.
let schema = null;
export function endpoints() {
  schema ||= get("/openapi.json").then((r) => new Set(Object.keys(r.data?.paths || {})));
  return schema;
}
