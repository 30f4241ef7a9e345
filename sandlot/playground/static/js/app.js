// The playground's entry point: one shell page, the page module chosen by the path
// (/playground/ is Run, /playground/tests is Tests, ...).
import { apiKey, checkKey, setApiKey } from "./api.js";
import { h, replace } from "./dom.js";

const PAGES = {
  run: () => import("./pages/run.js"),
  tests: () => import("./pages/tests.js"),
  datasets: () => import("./pages/datasets.js"),
  notebook: () => import("./pages/notebook.js"),
  status: () => import("./pages/status.js"),
};

function pageName() {
  const last = location.pathname.replace(/\/+$/, "/").split("/").pop();
  return last === "" ? "run" : last;
}

// Shown when the server answers 401 (it has API keys), or when this tab has a key already. Use
// checks the key with the server before keeping it, and says whether it was taken.
function keyBox(accepted) {
  const input = h("input", { type: "password", id: "api-key", name: "api-key", autocomplete: "off", value: apiKey() });
  const note = h("span", { class: "note", role: "status", "data-field": "key-note" });
  const say = (text, kind = "") => {
    note.textContent = text;
    note.className = `note ${kind}`;
  };
  const box = h(
    "form",
    {
      class: "keybox",
      hidden: !apiKey(),
      onsubmit: async (event) => {
        event.preventDefault();
        const key = input.value.trim();
        if (!key) {
          setApiKey("");
          return say("Forgotten.");
        }
        say("Checking the key…", "busy");
        const r = await checkKey(key);
        if (r.ok) {
          setApiKey(key);
          say("Key accepted; kept for this tab.", "good");
          accepted();
        } else if (r.status === 401) {
          say(`This key was refused: ${r.data?.detail || r.error}.`, "bad");
        } else {
          say(`The key could not be checked: ${r.error}.`, "bad");
        }
      },
    },
    h("label", { for: "api-key" }, "API key"),
    input,
    h("button", { type: "submit", class: "small" }, "Use"),
    note,
  );
  addEventListener("sandlot:unauthorized", () => {
    const first = box.hidden;
    box.hidden = false;
    say(apiKey() ? "The server refused this tab's key." : "This server asks for an API key.", "bad");
    if (first) input.focus();
  });
  return box;
}

async function start() {
  const name = pageName();
  const main = document.getElementById("main");
  let page = null;
  let refused = false; // the server answered 401 since the page last tried to start
  addEventListener("sandlot:unauthorized", () => {
    refused = true;
  });
  async function mountPage() {
    refused = false;
    try {
      page = await (PAGES[name] || PAGES.run)().then((module) => module.mount(main));
    } catch (exc) {
      page = null;
      const text = refused
        ? "This server asks for an API key: enter it above and press Use, and the page opens."
        : `This page could not start: ${exc.message}`;
      replace(main, h("p", { class: `status ${refused ? "" : "bad"}`, role: "alert", "data-field": "start" }, text));
      return;
    }
    document.body.dataset.ready = "true"; // for the browser tests: the page has mounted
  }
  document.querySelector("header.top").append(keyBox(() => page || mountPage()));
  for (const a of document.querySelectorAll("nav a[data-page]")) {
    if (a.dataset.page === name) a.setAttribute("aria-current", "page");
  }
  document.body.dataset.page = name;
  // Ctrl+Enter (Cmd+Enter) runs from anywhere on the page: the editor, stdin, a limit field.
  document.addEventListener(
    "keydown",
    (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && page?.run) {
        event.preventDefault();
        page.run();
      }
    },
    true,
  );
  await mountPage();
  document.body.dataset.started = "true"; // for the browser tests: mounted, or said why not
}

start();
