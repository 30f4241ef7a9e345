// Status: /health (isolation, slots busy, queue), the languages with their versions, and the
// server's metrics when it has a /metrics endpoint; refreshed every two seconds while visible.
import { endpoints, get, headers, url } from "../api.js";
import { h, replace } from "../dom.js";
import { languages } from "../languages.js";

const EVERY_MS = 2000;
const MAX_METRICS = 300;

function healthView(r) {
  const d = r.data;
  if (!d) return h("p", { class: "status bad", role: "status" }, r.error);
  const iso = d.isolation || {};
  return h(
    "div",
    null,
    h("p", { class: `status ${d.status === "ok" ? "good" : "bad"}`, "data-field": "health" }, d.status === "ok" ? "Ready: code runs in isolated boxes" : `Unavailable: ${iso.problem || "isolation is not ready"}`),
    h(
      "dl",
      { class: "facts" },
      h("dt", null, "Slots busy"),
      h("dd", { "data-field": "busy" }, h("meter", { min: "0", max: String(d.slots), value: String(d.busy), "aria-label": "slots busy" }), ` ${d.busy} of ${d.slots}`),
      h("dt", null, "Queued"),
      h("dd", { "data-field": "queued" }, String(d.queued)),
      h("dt", null, "Isolation"),
      h("dd", null, iso.mechanism || "—"),
      h("dt", null, "cgroup version"),
      h("dd", null, String(iso.cgroup_version ?? "—")),
    ),
  );
}

// Prometheus' text format: "name{labels} value" lines; comments and histogram buckets left out.
export function parseMetrics(text) {
  const rows = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?)\s+(\S+)/.exec(line);
    if (m && !/_bucket\{/.test(m[1])) rows.push([m[1], m[2]]);
    if (rows.length >= MAX_METRICS) break;
  }
  return rows;
}

function metricsView(text) {
  const rows = parseMetrics(text);
  if (!rows.length) return h("p", null, "The server's /metrics has no samples yet.");
  return h("div", { class: "table-scroll" }, h(
    "table",
    { class: "metrics" },
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "Metric"), h("th", { scope: "col" }, "Value"))),
    h("tbody", null, rows.map(([name, value]) => h("tr", null, h("td", null, h("code", null, name)), h("td", null, value)))),
  ));
}

function languageTable(rows) {
  return h("div", { class: "table-scroll" }, h(
    "table",
    { class: "languages" },
    h("thead", null, h("tr", null, ["Language", "Aliases", "Version", "Runs here", "Compiled"].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      null,
      rows.map((row) =>
        h(
          "tr",
          { class: row.available ? "" : "unavailable", "data-language": row.name },
          h("td", null, h("code", null, row.name)),
          h("td", null, row.aliases.join(", ")),
          h("td", null, row.version || "—"),
          h("td", null, row.available ? "yes" : `no: ${row.reason || "unavailable"}`),
          h("td", null, row.compiled ? "yes" : "no"),
        ),
      ),
    ),
  ));
}

export async function mount(main) {
  const [rows, paths] = await Promise.all([languages(), endpoints()]);
  const health = h("section", { "aria-live": "polite", "aria-label": "Health" });
  const metrics = h("section", { "aria-label": "Metrics" });
  const stamp = h("p", { class: "hint" });
  async function refresh() {
    if (document.hidden) return;
    const [r, m] = await Promise.all([get("/health"), paths.has("/metrics") ? fetch(url("/metrics"), { headers: headers() }) : null]);
    replace(health, healthView(r));
    if (m) replace(metrics, m.ok ? metricsView(await m.text()) : h("p", { class: "status bad" }, `HTTP ${m.status} from /metrics`));
    replace(stamp, `Updated ${new Date().toLocaleTimeString()}; every ${EVERY_MS / 1000} s.`);
  }
  replace(
    main,
    h("h1", null, "Status"),
    stamp,
    health,
    h("h2", null, "Metrics"),
    paths.has("/metrics") ? metrics : h("p", { "data-field": "metrics" }, "This server has no /metrics endpoint."),
    h("h2", null, "Languages"),
    languageTable(rows),
  );
  await refresh();
  setInterval(refresh, EVERY_MS);
  return {};
}
