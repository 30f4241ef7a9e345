// Notebook: Python cells in a live session (POST /sessions, then /sessions/{id}/execute,
// streamed), with rich output inline. A server without sessions but with /run_jupyter runs all
// the cells at once in a fresh kernel; one with neither says so.
import { endpoints, headers, post, url } from "../api.js";
import { editor } from "../editor.js";
import { h, replace, seconds } from "../dom.js";
import { bundle, errorOutput, output } from "../outputs.js";

const CELLS = [
  'import math\nx = 21\nprint("x =", x, "and pi =", round(math.pi, 4))',
  "x * 2",
  'import pandas as pd\npd.DataFrame({"n": [1, 2, 3], "square": [1, 4, 9]})',
  'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3, 4], [1, 4, 9, 16], marker="o")\nplt.title("squares")\nplt.show()',
];

function makeCell(list, code, onRun) {
  const label = h("span", { class: "count" }, "In [ ]");
  const box = h("div", { class: "editor-box" });
  const out = h("div", { class: "cell-output", "aria-live": "polite" });
  const cell = h("section", { class: "cell", "aria-label": "Cell" });
  const ed = editor(box, { value: code, mode: "text/x-python", label: "Cell code", lines: 3 });
  const runButton = h("button", { type: "button", class: "small", onclick: () => onRun(cell) }, "Run");
  const remove = h("button", { type: "button", class: "small", onclick: () => cell.remove() }, "Delete");
  cell.append(h("div", { class: "row" }, label, runButton, remove), box, out);
  cell.editor = ed;
  cell.out = out;
  cell.label = label;
  cell.runButton = runButton;
  list.append(cell);
  ed.cm.refresh();
  return cell;
}

// A session: made when the first cell runs, ended when the page goes away.
function liveSession(status) {
  let id = null;
  async function ensure() {
    if (id) return id;
    const r = await post("/sessions", { language: "python" });
    if (!r.ok) throw new Error(r.error);
    id = r.data.id;
    replace(status, `Session ${id}: a Python kernel in its own box; variables live until it ends or restarts.`);
    return id;
  }
  async function run(cell) {
    const sid = await ensure();
    replace(cell.out);
    const response = await fetch(url(`/sessions/${encodeURIComponent(sid)}/execute`), {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "application/x-ndjson" }),
      body: JSON.stringify({ code: cell.editor.value, stream: true }),
    });
    if (!response.ok) {
      const detail = await response.json().catch(() => ({}));
      if (response.status === 404 || response.status === 410) id = null; // next run: a new session
      throw new Error(`HTTP ${response.status}: ${detail.detail || response.statusText}`);
    }
    const lines = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await lines.read();
      if (value) buffer += value;
      const parts = buffer.split("\n");
      buffer = done ? "" : parts.pop();
      for (const line of parts.filter((l) => l.trim())) {
        const event = JSON.parse(line);
        if (event.type === "end") finish(cell, event);
        else {
          const node = output(event);
          if (node) cell.out.append(node);
        }
      }
      if (done) break;
    }
  }
  function finish(cell, end) {
    cell.label.textContent = `In [${end.execution_count ?? " "}]`;
    const notes = [`${end.status}, ${seconds(end.execution_time)}`];
    if (end.limit) notes.push(`stopped by the ${end.limit} limit`);
    if (end.truncated) notes.push("output truncated");
    if (end.kernel_restarted) notes.push("the kernel restarted: variables are lost");
    if (end.session_ended) {
      notes.push(`the session ended (${end.session_ended}); the next run starts a new one`);
      id = null;
    }
    cell.out.append(h("p", { class: `cell-meta ${end.status === "ok" ? "" : "bad"}` }, notes.join(" · ")));
  }
  async function restart() {
    if (!id) return;
    const r = await post(`/sessions/${encodeURIComponent(id)}/restart`, {});
    replace(status, r.ok ? `Session ${id}: kernel restarted, variables cleared.` : r.error);
  }
  addEventListener("pagehide", () => {
    if (id) fetch(url(`/sessions/${encodeURIComponent(id)}`), { method: "DELETE", headers: headers(), keepalive: true });
  });
  return { run, restart };
}

// /run_jupyter: every cell, in order, in one fresh kernel.
async function runAllOnce(cells, status) {
  for (const cell of cells) replace(cell.out);
  const r = await post("/run_jupyter", { cells: cells.map((c) => c.editor.value) });
  if (!r.ok) throw new Error(r.error);
  replace(status, `Ran ${r.data.cells.length} of ${cells.length} cells in a fresh kernel: ${r.data.status}.`);
  r.data.cells.forEach((res, i) => {
    const cell = cells[i];
    cell.label.textContent = `In [${res.execution_count ?? " "}]`;
    if (res.stdout) cell.out.append(h("pre", { class: "stream stdout" }, res.stdout));
    if (res.stderr) cell.out.append(h("pre", { class: "stream stderr" }, res.stderr));
    for (const d of res.display || []) cell.out.append(bundle(d));
    for (const e of res.error || []) cell.out.append(errorOutput(e));
    const notes = [`${res.status}, ${seconds(res.execution_time)}`];
    if (res.limit) notes.push(`stopped by the ${res.limit} limit`);
    cell.out.append(h("p", { class: "cell-meta" }, notes.join(" · ")));
  });
}

export async function mount(main) {
  const paths = await endpoints();
  const mode = paths.has("/sessions") ? "session" : paths.has("/run_jupyter") ? "batch" : "none";
  const status = h("p", { class: "hint", role: "status", "data-field": "notebook-status" });
  if (mode === "none") {
    replace(
      main,
      h("h1", null, "Notebook"),
      h("p", { class: "status bad", "data-field": "notebook-status" }, "This server has no notebook support: it answers neither /sessions nor /run_jupyter."),
    );
    return {};
  }
  const list = h("div", { class: "cells" });
  const session = mode === "session" ? liveSession(status) : null;
  let busy = false;
  async function guarded(fn) {
    if (busy) return;
    busy = true;
    try {
      await fn();
    } catch (exc) {
      replace(status, exc.message);
    } finally {
      busy = false;
    }
  }
  const cells = () => [...list.querySelectorAll(".cell")];
  const runCell = (cell) => guarded(() => (session ? session.run(cell) : runAllOnce(cells(), status)));
  const runAll = () => guarded(async () => {
    if (!session) return runAllOnce(cells(), status);
    for (const cell of cells()) await session.run(cell);
  });
  for (const code of CELLS) makeCell(list, code, runCell);
  replace(
    status,
    session ? "Cells run one by one in a live session, made when the first one runs." : "This server has /run_jupyter but no sessions: every run sends all the cells to one fresh kernel.",
  );
  replace(
    main,
    h("h1", null, "Notebook"),
    status,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "primary", onclick: runAll }, "Run all"),
      h("button", { type: "button", onclick: () => makeCell(list, "", runCell).editor.focus() }, "Add cell"),
      session ? h("button", { type: "button", onclick: () => guarded(() => session.restart()) }, "Restart kernel") : null,
      h("small", { class: "hint" }, "Ctrl+Enter runs the cell you are in · Esc leaves it"),
    ),
    list,
  );
  for (const cell of cells()) cell.editor.cm.refresh();
  return {
    run: () => {
      const cell = document.activeElement?.closest?.(".cell");
      return cell ? runCell(cell) : runAll();
    },
  };
}
