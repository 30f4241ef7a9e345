// Notebook outputs: text, images and HTML tables from a kernel, made safe to show. A kernel's
// HTML is never given to the browser's parser (which would also apply its styles and trip the
// page's CSP): a small tokenizer here reads its tags and text, and only a short list of
// elements is rebuilt, with no attributes but colspan/rowspan. No script, style, handler or
// URL of the kernel's ever reaches the page.
import { h } from "./dom.js";

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;
const KEEP = new Set(
  "table thead tbody tfoot tr th td caption p br div span b i em strong code pre ul ol li h1 h2 h3 h4 h5 h6 sub sup small hr blockquote".split(" "),
);
const VOID = new Set(["br", "hr", "img", "col", "meta", "link", "input", "wbr", "source"]);
const RAW = new Set(["script", "style", "textarea", "title", "template", "iframe", "noscript", "xmp"]);
const MAX_DEPTH = 64;
const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };
// A tag's attributes never hold "<" here, so a failed match stops at the next one: linear time
// on any input (an unclosed "<a" repeated a million times included).
const TOKEN = /<!--[^]*?(?:-->|$)|<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:[^<>"']|"[^<"]*"|'[^<']*')*)>|[^<]+|</g;
const MAX_HTML = 2 << 20; // characters; a bigger HTML output is shown as its text

function decode(text) {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g, (whole, name) => {
    if (name[0] !== "#") return ENTITIES[name.toLowerCase()] ?? whole;
    const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : "\ufffd";
  });
}

function span(attrs, name) {
  const m = new RegExp(`\\b${name}\\s*=\\s*["']?(\\d{1,3})\\b`, "i").exec(attrs);
  return m ? m[1] : null;
}

export function safeHTML(html) {
  if (html.length > MAX_HTML) return h("pre", { class: "result-output" }, html);
  const root = h("div", { class: "html-output" });
  const stack = [root];
  let skipping = null; // inside a raw-text element (script, style, ...): its text is dropped
  for (const [token, closing, rawName, attrs] of html.matchAll(TOKEN)) {
    const name = rawName?.toLowerCase();
    if (skipping) {
      if (closing && name === skipping) skipping = null;
      continue;
    }
    if (token.startsWith("<!--")) continue;
    if (!name) {
      stack.at(-1).append(document.createTextNode(decode(token)));
      continue;
    }
    if (RAW.has(name) && !closing) {
      skipping = name;
      continue;
    }
    if (!KEEP.has(name)) continue; // unknown tags vanish, their text stays
    if (closing) {
      const at = stack.findLastIndex((el, i) => i > 0 && el.localName === name);
      if (at > 0) stack.length = at;
      continue;
    }
    const el = document.createElement(name);
    for (const a of ["colspan", "rowspan"]) {
      const value = span(attrs, a);
      if (value) el.setAttribute(a, value);
    }
    stack.at(-1).append(el);
    if (!VOID.has(name) && stack.length <= MAX_DEPTH) stack.push(el);
  }
  return root;
}

function text(value) {
  return Array.isArray(value) ? value.join("") : String(value ?? "");
}

function image(mime, data) {
  const b64 = text(data);
  if (!BASE64.test(b64)) return null;
  return h("img", { src: `data:${mime};base64,${b64.replace(/\s/g, "")}`, alt: "image output", class: "image-output" });
}

// One MIME bundle, in the richest form we show: image, HTML, then plain text.
export function bundle(data) {
  for (const mime of ["image/png", "image/jpeg", "image/gif"]) {
    if (mime in data) {
      const img = image(mime, data[mime]);
      if (img) return img;
    }
  }
  if ("image/svg+xml" in data) {
    // An SVG in an <img> is an image: its scripts never run.
    return h("img", { src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text(data["image/svg+xml"]))}`, alt: "SVG output", class: "image-output" });
  }
  if ("text/html" in data) return safeHTML(text(data["text/html"]));
  return h("pre", { class: "result-output" }, text(data["text/plain"]));
}

export function errorOutput(error) {
  const tb = (error.traceback || []).join("\n").replace(ANSI, "");
  return h("pre", { class: "error-output" }, tb || `${error.ename}: ${error.evalue}`);
}

// One output event of a session's execution (Jupyter's message types).
export function output(event) {
  switch (event.type) {
    case "stdout":
    case "stderr":
      return h("pre", { class: `stream ${event.type}` }, event.text);
    case "display_data":
    case "execute_result":
      return bundle(event.data || {});
    case "error":
      return errorOutput(event);
    default:
      return null;
  }
}
