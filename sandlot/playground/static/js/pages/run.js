// Run: code in any language of the table, with stdin, files, fetch_files and limits.
import { field, h, replace } from "../dom.js";
import { showRun } from "../result.js";
import { pick, read } from "../share.js";
import { shareBox } from "../sharebox.js";
import { showSnippets } from "../snippets.js";
import { oneRunAtATime, workbench } from "../workbench.js";

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

export async function mount(main) {
  const notice = h("div", { class: "notice", role: "alert" });
  let shared = null;
  try {
    shared = await read("run");
  } catch (exc) {
    notice.textContent = `This share link cannot be opened: ${exc.message}.`;
  }
  const s = shared ? pick(shared, { language: "string", code: "string", stdin: "string", fetch_files: "string" }) : {};
  const bench = await workbench({ code: s.code, language: s.language });
  if (s.language) bench.setLanguage(s.language);
  if (shared) bench.setLimits(shared);
  const stdin = h("textarea", { name: "stdin", rows: "4", spellcheck: "false", value: s.stdin || "" });
  const upload = h("input", { type: "file", name: "files", multiple: true });
  const fetchFiles = h("input", { type: "text", name: "fetch_files", spellcheck: "false", value: s.fetch_files || "", placeholder: "out.txt, data/result.csv" });
  const runButton = h("button", { type: "button", class: "primary", "aria-keyshortcuts": "Control+Enter" }, "Run");
  const result = h("section", { class: "result", "aria-live": "polite", "aria-label": "Result" });
  const reproduce = h("div");
  const share = shareBox("run", () => ({
    language: bench.select.value,
    code: bench.editor.value,
    stdin: stdin.value,
    fetch_files: fetchFiles.value,
    ...safeLimits(),
  }));
  function safeLimits() {
    try {
      return bench.limits();
    } catch {
      return {};
    }
  }

  const runs = oneRunAtATime(runButton, result);
  async function run() {
    if (runs.busy) return;
    let body;
    try {
      body = { code: bench.editor.value, language: bench.select.value, ...bench.limits() };
      if (stdin.value) body.stdin = stdin.value;
      if (upload.files.length) {
        body.files = {};
        for (const file of upload.files) body.files[file.name] = await readFile(file);
      }
      const wanted = fetchFiles.value.split(/[,\s]+/).filter(Boolean);
      if (wanted.length) body.fetch_files = wanted;
    } catch (exc) {
      replace(result, h("p", { class: "status bad", role: "status" }, exc.message));
      return;
    }
    await runs.run(body, (r) => {
      showRun(result, r);
      showSnippets(reproduce, r);
    });
  }
  runButton.addEventListener("click", run);

  replace(
    main,
    h("h1", null, "Run code"),
    notice,
    bench.settings,
    bench.editorBox,
    h("div", { class: "row" }, runButton, share.button, h("small", { class: "hint" }, "Ctrl+Enter runs · Esc leaves the editor")),
    share.element,
    h(
      "div",
      { class: "inputs" },
      field("stdin", stdin),
      field("Files to upload", upload, "put in the work dir beside the program"),
      field("fetch_files", fetchFiles, "paths to read back after the run, comma-separated"),
    ),
    result,
    reproduce,
  );
  bench.editor.cm.refresh();
  return { run };
}
