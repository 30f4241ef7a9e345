// The "Share link" control: builds a link of the page's state, puts it in the address bar and
// in a read-only field to copy.
import { field, h, replace } from "./dom.js";
import { link } from "./share.js";

export function shareBox(page, state) {
  const out = h("div", { class: "share", hidden: true });
  const make = async () => {
    const href = await link(page, state());
    history.replaceState(null, "", href);
    const input = h("input", { type: "text", readonly: true, value: href, "data-share": "link" });
    const copy = h("button", { type: "button", onclick: async () => {
      input.select();
      try { await navigator.clipboard.writeText(href); note.textContent = "Copied."; } catch { note.textContent = "Selected: press Ctrl+C to copy."; }
    } }, "Copy link");
    const note = h("span", { class: "note", role: "status" });
    out.hidden = false;
    replace(out, field("Share link (the program is in the link; no files, nothing stored on the server)", input), copy, note);
    input.focus();
    input.select();
  };
  return { button: h("button", { type: "button", onclick: make }, "Share link"), element: out };
}
