// Status, for a person: whether code runs, the slots busy, the queue, runs per second, errors
// and refusals, then each language with its version and its runs since the server started.
// The numbers come from /metrics, which sums every process of the server (a server with two
// workers has each worker's /health tell its own share of the slots); a server without it
// gets /health's alone. The raw metrics are behind a disclosure. Refreshed every two seconds
// while the tab is visible.
import { endpoints, get, headers, url } from "../api.js";
import { h, replace } from "../dom.js";
import { languages } from "../languages.js";

const EVERY_MS = 2000;
const RUNS = "sandlot_exec_time_seconds_count"; // one sample per run, by language, step, status
const HTTP = "sandlot_http_requests_total"; // by endpoint and status code

// Prometheus' text format: {name, labels, value} of each sample line.
export function parseMetrics(text) {
  const samples = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const [, key, value] of (m[2] || "").matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key] = value.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

function sum(samples, name, where = () => true) {
  return samples.filter((s) => s.name === name && where(s.labels)).reduce((a, s) => a + s.value, 0);
}

// What the page shows, from one scrape: counters since the server started, gauges now.
export function summarize(samples) {
  const perLanguage = {};
  for (const s of samples) {
    if (s.name !== RUNS || s.labels.step !== "run") continue;
    const row = (perLanguage[s.labels.language] ||= { runs: 0, ok: 0, failed: 0, limits: 0 });
    row.runs += s.value;
    if (s.labels.status === "ok") row.ok += s.value;
    else if (s.labels.status === "error") row.failed += s.value;
    else row.limits += s.value;
  }
  return {
    slots: sum(samples, "sandlot_slots"),
    busy: sum(samples, "sandlot_slots_busy"),
    queued: sum(samples, "sandlot_queue_waiting"),
    runs: sum(samples, RUNS, (l) => l.step === "run"),
    refused: sum(samples, "sandlot_rejected_total"),
    clientErrors: sum(samples, HTTP, (l) => l.status?.startsWith("4")),
    serverErrors: sum(samples, HTTP, (l) => l.status?.startsWith("5") && l.status !== "504"),
    perLanguage,
  };
}

function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.map(([name, key, value]) => [h("dt", null, name), h("dd", { "data-field": key }, value)]));
}

function slotsLine(busy, slots) {
  return [h("meter", { min: "0", max: String(slots), value: String(busy), "aria-label": "slots busy" }), ` ${busy} of ${slots}`];
}

function healthLine(r) {
  const d = r.data;
  if (!d) return h("p", { class: "status bad", role: "status", "data-field": "health" }, r.error);
  const iso = d.isolation || {};
  const ready = d.status === "ok";
  return h("p", { class: `status ${ready ? "good" : "bad"}`, "data-field": "health" }, ready ? "Ready: code runs in isolated boxes" : `Unavailable: ${iso.problem || d.status}`);
}

function summaryView(r, now, rate) {
  const d = r.data || {};
  const iso = d.isolation || {};
  const workers = d.worker?.of || 1;
  const rows = now
    ? [
        ["Slots busy", "busy", slotsLine(now.busy, now.slots)],
        ["Queued", "queued", String(now.queued)],
        ["Runs per second", "rate", rate === null ? "—" : rate.toFixed(1)],
        ["Runs since start", "runs", String(now.runs)],
        ["Refused: server full (504)", "refused", String(now.refused)],
        ["Invalid requests (4xx)", "client-errors", String(now.clientErrors)],
        ["Server errors (5xx, not 504)", "server-errors", String(now.serverErrors)],
      ]
    : [
        ["Slots busy", "busy", [...slotsLine(d.busy ?? 0, d.slots ?? 0), workers > 1 ? ` (one worker of ${workers}: this server has no /metrics to sum them)` : ""]],
        ["Queued", "queued", String(d.queued ?? "—")],
      ];
  rows.push(["Worker processes", "workers", String(workers)], ["Isolation", "isolation", iso.mechanism || "—"], ["cgroup version", "cgroup", String(iso.cgroup_version ?? "—")]);
  return [healthLine(r), facts(rows)];
}

function languageTable(rows, perLanguage) {
  const counted = perLanguage !== null;
  const heads = ["Language", "Version", "Runs here", ...(counted ? ["Runs", "OK", "Failed", "Stopped by a limit"] : [])];
  return h("div", { class: "table-scroll" }, h(
    "table",
    { class: "languages" },
    h("thead", null, h("tr", null, heads.map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      null,
      rows.map((row) => {
        const n = perLanguage?.[row.name] || { runs: 0, ok: 0, failed: 0, limits: 0 };
        return h(
          "tr",
          { class: row.available ? "" : "unavailable", "data-language": row.name },
          h("td", null, h("code", null, row.name), row.aliases.length ? h("small", { class: "hint" }, ` ${row.aliases.join(", ")}`) : null),
          h("td", null, row.version || "—"),
          // The reason's first clause; the whole of it in the tooltip.
          h("td", { title: row.reason || null }, row.available ? "yes" : `no: ${(row.reason || "unavailable").split(/[:;(]/)[0].trim()}`),
          counted ? [n.runs, n.ok, n.failed, n.limits].map((v, i) => h("td", { class: "number", "data-count": ["runs", "ok", "failed", "limits"][i] }, String(v))) : null,
        );
      }),
    ),
  ));
}

export async function mount(main) {
  const [rows, paths] = await Promise.all([languages(), endpoints()]);
  const hasMetrics = paths.has("/metrics");
  const summary = h("section", { "aria-live": "polite", "aria-label": "Summary" });
  const table = h("section", { "aria-label": "Languages" });
  const raw = h("pre", { class: "raw-metrics", tabindex: "0" });
  const rawBox = h(
    "details",
    { class: "raw" },
    h("summary", null, "Raw metrics"),
    h("p", { class: "hint" }, "Prometheus' text format, as ", h("a", { href: url("/metrics") }, "/metrics"), " serves it to a scraper."),
    raw,
  );
  const stamp = h("p", { class: "hint" });
  let last = null; // the previous scrape: {at, runs}, for runs per second
  async function refresh() {
    if (document.hidden) return;
    const [r, m] = await Promise.all([get("/health"), hasMetrics ? fetch(url("/metrics"), { headers: headers() }) : null]);
    let now = null;
    let text = "";
    if (m?.ok) {
      text = await m.text();
      now = summarize(parseMetrics(text));
    }
    const at = performance.now();
    const rate = now && last ? Math.max(0, now.runs - last.runs) / ((at - last.at) / 1000) : null;
    if (now) last = { at, runs: now.runs };
    replace(summary, summaryView(r, now, rate));
    replace(table, languageTable(rows, now ? now.perLanguage : null));
    if (rawBox.open) replace(raw, m && !m.ok ? `HTTP ${m.status} from /metrics` : text);
    replace(stamp, `Updated ${new Date().toLocaleTimeString()}; every ${EVERY_MS / 1000} s.`);
  }
  rawBox.addEventListener("toggle", () => rawBox.open && refresh());
  replace(
    main,
    h("h1", null, "Status"),
    stamp,
    summary,
    h("h2", null, "Languages"),
    table,
    hasMetrics ? rawBox : h("p", { "data-field": "metrics" }, "This server has no /metrics endpoint."),
  );
  await refresh();
  setInterval(refresh, EVERY_MS);
  return {};
}
