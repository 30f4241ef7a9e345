// Datasets: a built-in problem's prompt, a completion to judge, and the judge's answer:
// accepted or rejected, why, the code it extracted, the program it ran and each test's result.
import { post, get } from "../api.js";
import { editor } from "../editor.js";
import { field, h, replace, seconds } from "../dom.js";
import { languages } from "../languages.js";
import { showSnippets } from "../snippets.js";

// The editor's mode for a dataset: the last part of its name that names a language
// (humaneval_x_cpp -> cpp, multiple_humaneval_cs -> csharp), else Python's.
function modeFor(rows, dataset) {
  const byName = new Map();
  for (const row of rows) for (const n of [row.name, ...row.aliases]) byName.set(n.toLowerCase(), row);
  const hit = dataset.toLowerCase().split("_").reverse().map((p) => byName.get(p)).find(Boolean);
  return (hit || byName.get("python"))?.template?.mode ?? null;
}

function code(title, key, text) {
  if (!text) return null;
  return h("section", { class: "pane" }, h("h3", null, title), h("pre", { "data-pane": key, tabindex: "0" }, text));
}

function testTable(tests) {
  if (!tests?.length) return null;
  return h(
    "table",
    { class: "cases" },
    h("thead", null, h("tr", null, ["#", "Verdict", "Status", "Time", "Output"].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      null,
      tests.map((t, i) => {
        const run = t.exec_info?.run_result;
        const out = [t.exec_info?.message, t.exec_info?.compile_result?.stderr, run?.stdout, run?.stderr].filter(Boolean).join("\n");
        return h(
          "tr",
          { "data-verdict": t.verdict || (t.passed ? "accepted" : "failed") },
          h("td", null, String(i + 1)),
          h("td", { class: t.passed ? "good" : "bad" }, t.verdict || (t.passed ? "passed" : "failed")),
          h("td", null, t.exec_info?.status || ""),
          h("td", null, seconds(run?.execution_time)),
          h("td", null, out ? h("details", null, h("summary", null, "stdout, stderr"), h("pre", null, out)) : ""),
        );
      }),
    ),
  );
}

function showJudged(target, r) {
  if (!r.ok) return replace(target, h("p", { class: "status bad", role: "status" }, r.error));
  const d = r.data;
  const extra = d.extra || {};
  return replace(
    target,
    h("p", { class: `status ${d.accepted ? "good" : "bad"}`, "data-field": "accepted", role: "status" }, d.accepted ? "Accepted" : "Rejected"),
    h(
      "dl",
      { class: "facts" },
      h("dt", null, "Verdict"),
      h("dd", { "data-field": "verdict" }, extra.verdict || "—"),
      h("dt", null, "Extraction"),
      h("dd", null, [d.extracted_type, extra.extraction].filter(Boolean).join(": ") || "—"),
      h("dt", null, "Language"),
      h("dd", null, extra.language || "—"),
    ),
    h("h3", null, "Reason"),
    h("pre", { class: "reason", "data-field": "reason", tabindex: "0" }, extra.reason || (d.accepted ? "every test passed" : "—")),
    h("h2", null, "Tests"),
    testTable(d.tests) || h("p", null, "No test ran."),
    h(
      "div",
      { class: "panes wide" },
      code("Extracted code", "extracted", d.extracted_code),
      code("Full program", "full", d.full_code),
      code("Test code", "test", d.test_code),
    ),
  );
}

export async function mount(main) {
  const [rows, names] = await Promise.all([languages(), get("/list_datasets")]);
  if (!names.ok) return replace(main, h("h1", null, "Datasets"), h("p", { class: "status bad" }, names.error));
  const datasetSelect = h("select", { id: "dataset", name: "dataset" }, names.data.map((n) => h("option", { value: n }, n)));
  const problemSelect = h("select", { id: "problem", name: "problem" });
  const prompt = h("pre", { class: "prompt", "data-pane": "prompt", tabindex: "0" });
  const labels = h("p", { class: "hint" });
  const box = h("div", { class: "editor-box" });
  const completion = editor(box, { label: "Completion", lines: 12 });
  const submitButton = h("button", { type: "button", class: "primary", "aria-keyshortcuts": "Control+Enter" }, "Submit");
  const result = h("section", { class: "result", "aria-live": "polite", "aria-label": "Judgement" });
  const reproduce = h("div");
  let ids = [];

  async function loadPrompt() {
    const id = ids[problemSelect.selectedIndex];
    if (id === undefined) return;
    const r = await post("/get_prompt_by_id", { dataset: datasetSelect.value, id });
    replace(prompt, r.ok ? r.data.prompt : r.error);
    // Short labels only: some datasets' labels hold the reference solution and the tests.
    const lab = r.ok ? Object.entries(r.data.labels || {}).filter(([, v]) => typeof v !== "object" && String(v).length <= 60).map(([k, v]) => `${k}: ${v}`) : [];
    replace(labels, lab.join(" · "));
  }
  async function loadIds() {
    completion.mode = modeFor(rows, datasetSelect.value);
    const r = await post("/list_ids", { dataset: datasetSelect.value });
    ids = r.ok ? r.data : [];
    replace(problemSelect, ids.map((id) => h("option", null, String(id))));
    if (!r.ok) replace(prompt, r.error);
    await loadPrompt();
  }
  datasetSelect.addEventListener("change", loadIds);
  problemSelect.addEventListener("change", loadPrompt);

  let running = false;
  async function run() {
    const id = ids[problemSelect.selectedIndex];
    if (running || id === undefined) return;
    running = true;
    submitButton.disabled = true;
    replace(result, h("p", { class: "status busy", role: "status" }, "Judging…"));
    try {
      const r = await post("/submit", { dataset: datasetSelect.value, id, completion: completion.value });
      showJudged(result, r);
      showSnippets(reproduce, r);
    } finally {
      running = false;
      submitButton.disabled = false;
    }
  }
  submitButton.addEventListener("click", run);

  const first = ["humaneval_python", "humaneval", "mbpp"].find((n) => names.data.includes(n));
  if (first) datasetSelect.value = first;
  replace(
    main,
    h("h1", null, "Datasets"),
    h("div", { class: "settings" }, field("Dataset", datasetSelect), field("Problem", problemSelect)),
    h("h2", null, "Prompt"),
    labels,
    prompt,
    h("h2", null, "Completion"),
    h("p", { class: "hint" }, "A model's answer: code, or text with fenced code blocks; the judge extracts the code as SandboxFusion does."),
    box,
    h("div", { class: "row" }, submitButton, h("small", { class: "hint" }, "Ctrl+Enter submits · Esc leaves the editor")),
    result,
    reproduce,
  );
  completion.cm.refresh();
  await loadIds();
  return { run };
}
