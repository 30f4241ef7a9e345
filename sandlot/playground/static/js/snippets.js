// "Copy as curl" and "copy as Python": the request just sent, reproduced exactly (same URL,
// same JSON body byte for byte in curl; the same JSON value in Python).
import { h, replace } from "./dom.js";

function shellQuote(text) {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

// A request sent with an API key names it by an environment variable: the key is not shown.
export function curl(target, sent, keyed = false) {
  const auth = keyed ? ` -H "Authorization: Bearer $SANDLOT_API_KEY"` : "";
  return `curl -sS ${shellQuote(target)} -H 'Content-Type: application/json'${auth} --data-binary ${shellQuote(sent)}`;
}

// A JSON string literal is a Python string literal too; long ones are split after each newline
// into adjacent literals, which Python joins.
function pyString(text, pad) {
  if (text.length <= 60 || !text.includes("\n")) return JSON.stringify(text);
  const parts = text.split(/(?<=\n)/).map((line) => JSON.stringify(line));
  return `(\n${parts.map((p) => `${pad}    ${p}`).join("\n")}\n${pad})`;
}

export function pyLiteral(value, pad = "") {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return pyString(value, pad);
  const inner = `${pad}    `;
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    return `[\n${value.map((v) => `${inner}${pyLiteral(v, inner)},`).join("\n")}\n${pad}]`;
  }
  const keys = Object.keys(value);
  if (!keys.length) return "{}";
  const rows = keys.map((k) => `${inner}${JSON.stringify(k)}: ${pyLiteral(value[k], inner)},`);
  return `{\n${rows.join("\n")}\n${pad}}`;
}

export function python(target, sent, keyed = false) {
  const auth = keyed ? ', headers={"Authorization": "Bearer " + os.environ["SANDLOT_API_KEY"]}' : "";
  return [
    keyed ? "import os\n" : "",
    "import httpx",
    "",
    `body = ${pyLiteral(JSON.parse(sent))}`,
    `response = httpx.post(${JSON.stringify(target)}, json=body${auth}, timeout=600)`,
    "print(response.json())",
    "",
  ].join("\n").trimStart();
}

async function copy(text, pre, note) {
  try {
    await navigator.clipboard.writeText(text);
    note.textContent = "Copied.";
  } catch {
    // No clipboard API (a plain-http host that is not localhost): select it for Ctrl+C.
    const range = document.createRange();
    range.selectNodeContents(pre);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    note.textContent = "Selected: press Ctrl+C to copy.";
  }
}

// Fills `target` with both snippets of the answer `r` (from api.post) and their copy buttons.
export function showSnippets(target, r) {
  const shell = curl(r.url, r.sent, r.keyed);
  const py = python(r.url, r.sent, r.keyed);
  const note = h("span", { class: "note", role: "status" });
  const curlPre = h("pre", { "data-snippet": "curl" }, shell);
  const pyPre = h("pre", { "data-snippet": "python" }, py);
  return replace(
    target,
    h(
      "details",
      { class: "reproduce" },
      h("summary", null, "Reproduce this request"),
      h(
        "div",
        { class: "row" },
        h("button", { type: "button", onclick: () => copy(shell, curlPre, note) }, "Copy as curl"),
        h("button", { type: "button", onclick: () => copy(py, pyPre, note) }, "Copy as Python"),
        note,
      ),
      curlPre,
      pyPre,
    ),
  );
}
