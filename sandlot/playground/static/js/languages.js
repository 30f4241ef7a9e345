// The languages this server knows (GET /languages) with each one's template (editor mode and
// hello world, GET /playground/templates.json), and the picker built from them: languages
// this server cannot run are listed greyed out, with the reason.
import { get } from "./api.js";
import { h } from "./dom.js";

let loaded = null;

export function languages() {
  loaded ||= Promise.all([get("/languages"), get("/playground/templates.json")]).then(
    ([rows, templates]) => {
      if (!rows.ok) {
        loaded = null; // asked again next time: after an API key is given, say
        throw new Error(rows.error);
      }
      const table = templates.data || {};
      return rows.data.map((row) => ({ ...row, template: table[row.name] || null }));
    },
  );
  return loaded;
}

export function modeOf(rows, name) {
  return rows.find((row) => row.name === name)?.template?.mode ?? null;
}

// A <select> of every language; the unavailable ones disabled, in their own group.
export function picker(rows, selected, { id, only } = {}) {
  const usable = rows.filter((row) => row.available && (!only || only(row)));
  const other = rows.filter((row) => !usable.includes(row));
  const option = (row, ok) => {
    const why = ok ? "" : row.available ? "not for this page" : row.reason || "unavailable";
    // The option shows the reason's first clause; its title (a tooltip) the whole of it.
    const text = ok ? row.name : `${row.name}: ${why.split(/[:;(]/)[0].trim()}`;
    return h("option", { value: row.name, disabled: !ok, title: why || row.version || null }, text);
  };
  const select = h(
    "select",
    { id, name: "language" },
    h("optgroup", { label: "Available" }, usable.map((row) => option(row, true))),
    other.length ? h("optgroup", { label: "Not available here" }, other.map((row) => option(row, false))) : null,
  );
  select.value = usable.some((row) => row.name === selected) ? selected : usable[0]?.name || "";
  return select;
}
