// Talking to the broker: JSON requests (errors become Error objects carrying the API's message) and the
// server-sent events stream (/events), with one listener list per event name.

export class ApiError extends Error {
  constructor(status, kind, message) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

export async function api(method, path, body) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, "network", `the broker did not answer (${err.message})`);
  }
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    throw new ApiError(response.status, "bad_answer", `HTTP ${response.status} without JSON`);
  }
  if (!response.ok) {
    throw new ApiError(response.status, payload.error || "error", payload.message || `HTTP ${response.status}`);
  }
  return payload;
}

export const get = (path) => api("GET", path);

const listeners = new Map();
let source = null;

export function on(event, callback) {
  if (!listeners.has(event)) listeners.set(event, new Set());
  listeners.get(event).add(callback);
  return () => listeners.get(event).delete(callback);
}

export function connectEvents(onState) {
  if (source) return;
  source = new EventSource("/events");
  source.onopen = () => onState(true);
  source.onerror = () => onState(false);  // EventSource reconnects by itself
  for (const name of ["records", "topics", "groups", "requests", "clock", "metrics"]) {
    source.addEventListener(name, (event) => {
      const data = JSON.parse(event.data);
      for (const callback of listeners.get(name) || []) callback(data);
    });
  }
}
