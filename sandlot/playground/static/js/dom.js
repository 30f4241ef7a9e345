// DOM from data. Strings always become text nodes: nothing a program prints, and nothing a
// dataset or a share link holds, is ever parsed as markup. No innerHTML anywhere.

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "selected", "open"]);

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "style" || key === "innerHTML") throw new Error(`h(): ${key} is not allowed`);
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (PROPERTIES.has(key)) el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let ids = 0;
export function uid(prefix) {
  ids += 1;
  return `${prefix}-${ids}`;
}

// A labelled form control: label text, the control, an optional hint below it.
export function field(label, control, hint) {
  control.id ||= uid("f");
  const help = hint ? h("small", { id: `${control.id}-hint`, class: "hint" }, hint) : null;
  if (help) control.setAttribute("aria-describedby", help.id);
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, help);
}

export function mebibytes(bytes) {
  return bytes == null ? "—" : `${(bytes / 1048576).toFixed(1)} MiB`;
}

export function seconds(value) {
  return value == null ? "—" : `${Number(value).toFixed(3)} s`;
}
