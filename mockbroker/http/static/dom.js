// Small DOM helpers: an element builder, tables, the ways a record's bytes are shown, and redraw helpers.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// A table with a caption, column headers and rows: arrays of cells (text or nodes), {attrs, cells}, or
// {attrs, full} for one cell across every column. Each cell carries its column's name (data-label), which
// a narrow screen shows in front of the cell when the table's rows are stacked.
export function table(caption, columns, rows, attrs = {}) {
  const body = rows.length
    ? rows.map((row) => (row.full !== undefined
      ? h("tr", row.attrs || {}, h("td", { colspan: columns.length }, row.full))
      : h("tr", row.attrs || {}, (row.cells || row).map((cell, i) => h("td", { "data-label": columns[i] }, cell)))))
    : [h("tr", {}, h("td", { colspan: columns.length, class: "muted" }, "nothing yet"))];
  return h("div", { class: "scroll" },
    h("table", attrs,
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, body)));
}

export function formatTime(ms) {
  if (ms === null || ms === undefined || ms < 0) return "–";
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString().replace("T", " ").replace("Z", "");
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function bytesOf(text, encoding) {
  if (text === null || text === undefined) return null;
  if (encoding === "base64") return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(text);
}

export function hexDump(bytes) {
  const lines = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const chunk = Array.from(bytes.slice(i, i + 16));
    const hex = chunk.map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = chunk.map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${i.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join("\n");
}

// Bytes a reader cannot take as text: not UTF-8 (the API sent base64), or control characters other than
// tab, newline and carriage return (C0, DEL, C1).
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
export function isBinary(text, encoding) {
  return encoding === "base64" || CONTROL.test(text);
}

// JSON on one line, with a space after each colon and comma: {"a": 1, "b": [1, 2]}.
export function compactJson(value) {
  if (Array.isArray(value)) return `[${value.map(compactJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${compactJson(v)}`).join(", ")}}`;
  }
  return JSON.stringify(value);
}

const hexBytes = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");

// A key, value or header value as the chosen format: auto (hex for binary, JSON when an object or array
// parses, else text), text, json or hex. Compact (the default) keeps it on one line, cut with an
// ellipsis by the cell (class "data"); expanded shows JSON pretty-printed and hex as a dump with offsets.
export function showData(text, encoding, format, expanded = false) {
  if (text === null || text === undefined) return h("span", { class: "muted" }, "null");
  const binary = isBinary(text, encoding);
  if (format === "text" && encoding === "base64") {
    return h("span", { class: "muted" }, `(not UTF-8, ${bytesOf(text, encoding).length} B)`);
  }
  if (format === "hex" || (format === "auto" && binary)) {
    const bytes = bytesOf(text, encoding);
    return expanded ? h("pre", { class: "hex" }, hexDump(bytes))
      : h("code", { class: "data hex", title: `${bytes.length} bytes` }, hexBytes(bytes));
  }
  if (format === "auto" || format === "json") {
    try {
      const parsed = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null) {
        return expanded ? h("pre", { class: "json" }, JSON.stringify(parsed, null, 2))
          : h("code", { class: "data json" }, compactJson(parsed));
      }
    } catch {
      if (format === "json") return h("span", { class: "data" }, text, " ", h("span", { class: "muted" }, "(not JSON)"));
    }
  }
  return h("span", { class: "data text" }, text);
}

export function message(kind, text) {
  return h("p", { class: `msg ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

// Calls fn once, `ms` after the first of a burst of calls (a steady stream of events still redraws).
export function debounce(fn, ms) {
  let timer = null;
  return () => {
    if (timer !== null) return;
    timer = setTimeout(() => { timer = null; fn(); }, ms);
  };
}

export async function guarded(main, render) {
  try {
    await render();
  } catch (err) {
    main.append(message("error", err.message));
  }
}
