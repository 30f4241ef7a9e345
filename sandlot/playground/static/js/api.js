// Calls to the API of the server that served this page. Every POST body is JSON, sent with
// Content-Type: application/json (the server refuses anything else, against cross-site forms).

// The pages live under <base>/playground/, the API at <base>/.
const BASE = new URL("../", document.baseURI);

export function url(path) {
  return new URL(path.replace(/^\//, ""), BASE).href;
}

async function answer(response, target, sent) {
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  let error = null;
  if (!response.ok) {
    const detail = data && typeof data.detail === "string" ? data.detail : text.slice(0, 2000);
    error = `HTTP ${response.status}: ${detail || response.statusText}`;
  }
  return { ok: response.ok, status: response.status, url: target, sent, data, text, error };
}

async function send(target, init, sent) {
  try {
    return await answer(await fetch(target, init), target, sent);
  } catch (exc) {
    const error = `no answer from the server (${exc.message})`;
    return { ok: false, status: 0, url: target, sent, data: null, text: "", error };
  }
}

// POST body as JSON. `sent` in the result is the exact text sent, for "copy as curl".
export function post(path, body, init = {}) {
  const sent = JSON.stringify(body);
  const headers = { "Content-Type": "application/json" };
  return send(url(path), { method: "POST", headers, body: sent, ...init }, sent);
}

export function get(path) {
  return send(url(path), { headers: { Accept: "application/json" } }, null);
}

export function del(path) {
  return send(url(path), { method: "DELETE" }, null);
}

// The paths this server has, from its OpenAPI schema: pages ask before calling an endpoint
// that an older or smaller server may lack (sessions, metrics), instead of provoking a 404.
let schema = null;
export function endpoints() {
  schema ||= get("/openapi.json").then((r) => new Set(Object.keys(r.data?.paths || {})));
  return schema;
}
