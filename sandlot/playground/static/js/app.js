// The playground's entry point: one shell page, the page module chosen by the path
// (/playground/ is Run, /playground/tests is Tests, ...).
import { apiKey, setApiKey } from "./api.js";
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

// Shown when the server answers 401 (it has API keys), or when this tab has a key already.
function keyBox() {
  const input = h("input", { type: "password", id: "api-key", name: "api-key", autocomplete: "off", value: apiKey() });
  const note = h("span", { class: "note", role: "status" });
  const box = h(
    "form",
    {
      class: "keybox",
      hidden: !apiKey(),
      onsubmit: (event) => {
        event.preventDefault();
        setApiKey(input.value.trim());
        note.textContent = input.value.trim() ? "Kept for this tab; send the request again." : "Forgotten.";
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
    note.textContent = "This server asks for an API key.";
    if (first) input.focus();
  });
  return box;
}

async function start() {
  document.querySelector("header.top").append(keyBox());
  const name = pageName();
  const main = document.getElementById("main");
  for (const a of document.querySelectorAll("nav a[data-page]")) {
    if (a.dataset.page === name) a.setAttribute("aria-current", "page");
  }
  document.body.dataset.page = name;
  let page;
  try {
    page = await (PAGES[name] || PAGES.run)().then((module) => module.mount(main));
  } catch (exc) {
    replace(main, h("p", { class: "status bad", role: "alert" }, `This page could not start: ${exc.message}`));
    return;
  }
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
  document.body.dataset.ready = "true"; // for the browser tests: the page has mounted
}

start();
