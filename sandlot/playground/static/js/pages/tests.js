// Tests: the editor with test_cases, an expression and its expected value (languages with a
// harness) or stdin and the expected stdout (every language); a verdict per case.
import { h, replace, seconds } from "../dom.js";
import { showRun } from "../result.js";
import { pick, read } from "../share.js";
import { shareBox } from "../sharebox.js";
import { showSnippets } from "../snippets.js";
import { oneRunAtATime, workbench } from "../workbench.js";

const EXAMPLE = {
  code: "def add(a, b):\n    return a + b\n",
  mode: "expression",
  cases: [
    ["add(1, 2)", "3"],
    ["add(0.1, 0.2)", "0.3"],
    ["add(2, 2)", "5"],
  ],
};
const KINDS = {
  expression: { input: "input", expected: "expected", inputLabel: "Expression", expectedLabel: "Expected value" },
  stdin: { input: "stdin", expected: "expected_stdout", inputLabel: "stdin", expectedLabel: "Expected stdout" },
};

function caseRow(list, input = "", expected = "") {
  const n = () => [...list.children].indexOf(row) + 1;
  const inputBox = h("textarea", { rows: "2", spellcheck: "false", "data-case": "input", value: input });
  const expectedBox = h("textarea", { rows: "2", spellcheck: "false", "data-case": "expected", value: expected });
  const inputLabel = h("label", null);
  const expectedLabel = h("label", null);
  const row = h(
    "li",
    { class: "case" },
    h("div", { class: "field" }, inputLabel, inputBox),
    h("div", { class: "field" }, expectedLabel, expectedBox),
    h("button", { type: "button", class: "small", onclick: () => { row.remove(); relabel(list); } }, "Remove"),
  );
  row.relabel = (kind) => {
    for (const [label, box, text] of [[inputLabel, inputBox, kind.inputLabel], [expectedLabel, expectedBox, kind.expectedLabel]]) {
      box.id ||= `case-${Math.random().toString(36).slice(2)}`;
      label.htmlFor = box.id;
      label.textContent = `${text} ${n()}`;
    }
  };
  row.pair = () => [inputBox.value, expectedBox.value];
  return row;
}

function relabel(list) {
  for (const row of list.children) row.relabel(KINDS[list.dataset.kind]);
}

function verdicts(target, r) {
  const tests = r.data?.tests;
  if (!r.ok || !tests) return replace(target);
  const passed = tests.filter((t) => t.passed).length;
  return replace(
    target,
    h("p", { class: `status ${passed === tests.length ? "good" : "bad"}`, "data-field": "verdict" }, `${passed} of ${tests.length} cases passed`),
    h(
      "table",
      { class: "cases" },
      h("thead", null, h("tr", null, ["#", "Verdict", "Input", "Expected", "Actual", "Error", "Time"].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        null,
        tests.map((t, i) =>
          h(
            "tr",
            { "data-verdict": t.passed ? "passed" : "failed" },
            h("td", null, String(i + 1)),
            h("td", { class: t.passed ? "good" : "bad" }, t.passed ? "passed" : "failed"),
            h("td", null, h("pre", null, t.input ?? t.stdin ?? "")),
            h("td", null, h("pre", null, t.expected)),
            h("td", null, h("pre", null, t.actual ?? "")),
            h("td", null, h("pre", null, t.error ?? "")),
            h("td", null, seconds(t.run_result?.execution_time)),
          ),
        ),
      ),
    ),
  );
}

export async function mount(main) {
  const notice = h("div", { class: "notice", role: "alert" });
  let shared = null;
  try {
    shared = await read("tests");
  } catch (exc) {
    notice.textContent = `This share link cannot be opened: ${exc.message}.`;
  }
  const s = shared ? pick(shared, { language: "string", code: "string", mode: "string" }) : {};
  const bench = await workbench({ code: s.code ?? EXAMPLE.code, language: s.language || "python" });
  if (shared) bench.setLimits(shared);
  const list = h("ol", { class: "case-list" });
  const radios = Object.keys(KINDS).map((kind) =>
    h("input", { type: "radio", name: "kind", value: kind, id: `kind-${kind}` }),
  );
  const setKind = (kind) => {
    list.dataset.kind = kind;
    for (const r of radios) r.checked = r.value === kind;
    relabel(list);
  };
  const expressions = () => (bench.row()?.test_cases || []).includes("expression");
  const syncKinds = () => {
    radios[0].disabled = !expressions();
    if (!expressions()) setKind("stdin");
  };
  for (const r of radios) r.addEventListener("change", () => setKind(r.value));
  const cases = Array.isArray(shared?.cases) ? shared.cases.filter((c) => Array.isArray(c) && c.every((x) => typeof x === "string")) : EXAMPLE.cases;
  for (const [input, expected] of cases) list.append(caseRow(list, input, expected));
  setKind(KINDS[s.mode] ? s.mode : EXAMPLE.mode);
  syncKinds();
  bench.onLanguage(syncKinds);

  const runButton = h("button", { type: "button", class: "primary", "aria-keyshortcuts": "Control+Enter" }, "Run tests");
  const table = h("section", { class: "verdicts", "aria-live": "polite", "aria-label": "Verdicts" });
  const result = h("div", { class: "result" });
  const resultBox = h("section", { "aria-label": "Build and run" }, h("h2", null, "The build, and the first failing case's run (or the last case's)"), result);
  const reproduce = h("div");
  const state = () => ({ language: bench.select.value, code: bench.editor.value, mode: list.dataset.kind, cases: [...list.children].map((row) => row.pair()) });
  const share = shareBox("tests", state);
  const runs = oneRunAtATime(runButton, table);
  async function run() {
    if (runs.busy) return;
    const kind = KINDS[list.dataset.kind];
    let body;
    try {
      body = { code: bench.editor.value, language: bench.select.value, ...bench.limits() };
    } catch (exc) {
      return replace(table, h("p", { class: "status bad" }, exc.message));
    }
    body.test_cases = [...list.children].map((row) => {
      const [input, expected] = row.pair();
      return { [kind.input]: input, [kind.expected]: expected };
    });
    await runs.run(body, (r) => {
      verdicts(table, r);
      showRun(result, r);
      showSnippets(reproduce, r);
    });
  }
  runButton.addEventListener("click", run);
  replace(
    main,
    h("h1", null, "Test cases"),
    notice,
    bench.settings,
    bench.editorBox,
    h(
      "fieldset",
      { class: "kinds" },
      h("legend", null, "Cases are"),
      radios.map((r) => h("label", { for: r.id, class: "inline" }, r, r.value === "expression" ? " expressions and their values (Python, JavaScript)" : " stdin and the expected stdout (any language)")),
    ),
    list,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", onclick: () => { list.append(caseRow(list)); relabel(list); list.lastChild.querySelector("textarea").focus(); } }, "Add case"),
      runButton,
      share.button,
      h("small", { class: "hint" }, "Ctrl+Enter runs · Esc leaves the editor"),
    ),
    share.element,
    table,
    resultBox,
    reproduce,
  );
  relabel(list);
  bench.editor.cm.refresh();
  return { run };
}
