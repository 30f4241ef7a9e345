// A /run_code answer shown as a status line and separate panes: compile output, stdout, stderr,
// the sandbox's message, and the files fetched back. Every text goes in as text.
import { h, mebibytes, replace, seconds } from "./dom.js";

export const LIMITS = {
  time: "wall-time limit",
  cpu: "CPU-time limit",
  memory: "memory limit",
  output: "output limit",
};

function statusClass(status) {
  return { Success: "good", Failed: "bad", SandboxError: "bad" }[status] || "bad";
}

function item(name, value, key) {
  return [h("dt", null, name), h("dd", { "data-field": key }, value)];
}

function runLine(step) {
  if (!step) return "—";
  const how = step.signal ? `killed by signal ${step.signal}` : `exit code ${step.return_code ?? "—"}`;
  return `${step.status}, ${how}`;
}

function truncation(step) {
  const cut = [];
  if (step?.stdout_truncated) cut.push("stdout");
  if (step?.stderr_truncated) cut.push("stderr");
  return cut.length ? `${cut.join(" and ")} cut at the output cap` : "no";
}

export function pane(title, key, text, empty = "(empty)") {
  const body = text ? text : empty;
  return h(
    "section",
    { class: "pane", "aria-label": title },
    h("h3", null, title),
    h("pre", { "data-pane": key, class: text ? "" : "empty", tabindex: "0" }, body),
  );
}

function bytesOf(base64) {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i += 1) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

function fileList(files) {
  const names = Object.keys(files || {});
  if (!names.length) return null;
  return h(
    "section",
    { class: "files", "aria-label": "Files fetched" },
    h("h3", null, "Files fetched"),
    h(
      "ul",
      null,
      names.map((name) => {
        const bytes = bytesOf(files[name]);
        const href = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
        let preview = null;
        try {
          if (bytes.length <= 65536) preview = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        } catch {
          preview = null;
        }
        return h(
          "li",
          null,
          h("a", { href, download: name.split("/").pop() }, name),
          ` (${bytes.length} bytes)`,
          preview !== null ? h("pre", { "data-file": name }, preview) : null,
        );
      }),
    ),
  );
}

// How the compile step went: it may have failed (the run then never started) or been skipped.
function buildLine(compile, cached) {
  if (!compile) return "no compile step";
  if (cached) return "cached build (compiler skipped)";
  const ok = compile.status === "Finished" && compile.return_code === 0;
  if (ok) return "compiled";
  const why = compile.limit ? `the ${LIMITS[compile.limit] || compile.limit} stopped it` : runLine(compile);
  return `compile failed: ${why}`;
}

// Fills `target` with the answer `r` (from api.post) to a /run_code request.
export function showRun(target, r) {
  const d = r.data || {};
  if (!r.ok) {
    return replace(
      target,
      h("p", { class: "status bad", "data-field": "status", role: "status" }, r.error),
      pane("Sandbox message", "message", r.error),
    );
  }
  const run = d.run_result;
  const compile = d.compile_result;
  const fired = run?.limit || compile?.limit;
  const build = buildLine(compile, d.cached_build);
  const compileText = compile
    ? [`${runLine(compile)}, ${seconds(compile.execution_time)}`, compile.stdout, compile.stderr]
        .filter(Boolean)
        .join("\n")
    : "";
  return replace(
    target,
    h("p", { class: `status ${statusClass(d.status)}`, "data-field": "status", role: "status" }, d.status),
    h(
      "dl",
      { class: "facts" },
      item("Run", runLine(run), "run"),
      item("Time", seconds(run?.execution_time), "time"),
      item("CPU time", seconds(run?.cpu_time), "cpu"),
      item("Peak memory", mebibytes(run?.memory_peak_bytes), "memory"),
      item("Limit", fired ? `${fired}: the ${LIMITS[fired] || fired} stopped it` : "none", "limit"),
      item("Truncated", truncation(run), "truncated"),
      item("Build", build, "build"),
    ),
    h(
      "div",
      { class: "panes" },
      pane("Compile output", "compile", compileText, compile ? "(empty)" : "(no compile step)"),
      pane("stdout", "stdout", run?.stdout),
      pane("stderr", "stderr", run?.stderr),
      pane("Sandbox message", "message", d.message, "(none)"),
    ),
    fileList(d.files),
  );
}
