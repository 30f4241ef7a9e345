// Notebook outputs: text, images and HTML tables from a kernel, made safe to show. A kernel's
// HTML is parsed in an inert document and rebuilt from a short list of elements with no
// attributes but colspan/rowspan: no script, style, link, handler or URL of its ever reaches
// the page.
import { h } from "./dom.js";

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;
const KEEP = new Set(
  "table thead tbody tfoot tr th td caption colgroup col p br div span b i em strong code pre ul ol li h1 h2 h3 h4 h5 h6 sub sup small hr blockquote".split(" "),
);
const DROP = new Set(["script", "style", "template", "iframe", "object", "embed", "svg", "math", "noscript", "head", "title"]);
const MAX_DEPTH = 64;

function rebuild(node, depth) {
  if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.textContent);
  if (node.nodeType !== Node.ELEMENT_NODE || depth > MAX_DEPTH) return null;
  const tag = node.localName;
  if (DROP.has(tag)) return null;
  const kids = [...node.childNodes].map((c) => rebuild(c, depth + 1)).filter(Boolean);
  if (!KEEP.has(tag)) {
    const group = document.createDocumentFragment();
    group.append(...kids);
    return group;
  }
  const el = document.createElement(tag);
  for (const name of ["colspan", "rowspan"]) {
    const value = node.getAttribute(name);
    if (value && /^\d{1,3}$/.test(value)) el.setAttribute(name, value);
  }
  el.append(...kids);
  return el;
}

export function safeHTML(html) {
  const doc = new DOMParser().parseFromString(html, "text/html");
  const out = h("div", { class: "html-output" });
  out.append(...[...doc.body.childNodes].map((c) => rebuild(c, 0)).filter(Boolean));
  return out;
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
