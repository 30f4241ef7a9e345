// What the Run and Tests pages share: the language picker, the editor with each language's
// template, the compile/run timeouts and the memory limit; one /run_code at a time.
import { post } from "./api.js";
import { editor } from "./editor.js";
import { field, h, replace } from "./dom.js";
import { languages, picker } from "./languages.js";

// A page's runs, one at a time: its button is off and `pane` says so until `show` has the answer.
export function oneRunAtATime(button, pane) {
  let busy = false;
  return {
    get busy() {
      return busy;
    },
    async run(body, show) {
      busy = true;
      button.disabled = true;
      replace(pane, h("p", { class: "status busy", role: "status" }, "Running…"));
      try {
        show(await post("/run_code", body));
      } finally {
        busy = false;
        button.disabled = false;
      }
    },
  };
}

function number(label, name, hint) {
  const input = h("input", { type: "number", name, min: "0", step: "any", placeholder: "default", inputmode: "decimal" });
  return { input, element: field(label, input, hint) };
}

export async function workbench({ label = "Code", code, language } = {}) {
  const rows = await languages();
  const select = picker(rows, language || "python", { id: "language" });
  const row = () => rows.find((r) => r.name === select.value);
  let template = row()?.template?.code || "";
  const box = h("div", { class: "editor-box" });
  const ed = editor(box, { value: code ?? template, mode: row()?.template?.mode, label });
  const limits = {
    compile_timeout: number("Compile timeout (s)", "compile_timeout"),
    run_timeout: number("Run timeout (s)", "run_timeout"),
    memory_limit_MB: number("Memory (MiB)", "memory_limit_MB"),
  };
  const changed = [];
  select.addEventListener("change", () => {
    const next = row()?.template;
    ed.mode = next?.mode ?? null;
    // An untouched template follows the language; code someone wrote stays.
    if (!ed.value.trim() || ed.value === template) ed.value = next?.code || "";
    template = next?.code || "";
    for (const fn of changed) fn(row());
  });
  const hello = h("button", { type: "button", onclick: () => { ed.value = row()?.template?.code || ""; ed.focus(); } }, "Hello world");
  return {
    rows,
    select,
    editor: ed,
    row,
    onLanguage: (fn) => changed.push(fn),
    settings: h("div", { class: "settings" }, field("Language", select), ...Object.values(limits).map((l) => l.element), hello),
    editorBox: box,
    // {field: number} of the limits set; throws with the field's label when one is not a number.
    limits() {
      const out = {};
      for (const [key, { input }] of Object.entries(limits)) {
        if (!input.validity.valid) throw new Error(`${input.labels[0].textContent} must be a positive number`);
        if (input.value !== "") out[key] = key === "memory_limit_MB" ? Math.round(Number(input.value)) : Number(input.value);
      }
      return out;
    },
    setLimits(values) {
      for (const [key, { input }] of Object.entries(limits)) {
        if (typeof values[key] === "number" && Number.isFinite(values[key])) input.value = String(values[key]);
      }
    },
    setLanguage(name) {
      if ([...select.options].some((o) => o.value === name && !o.disabled)) {
        select.value = name;
        ed.mode = row()?.template?.mode ?? null;
        template = row()?.template?.code || "";
        for (const fn of changed) fn(row());
      }
    },
  };
}
