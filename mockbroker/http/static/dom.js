// Small DOM helpers: an element builder, tables, and the ways a record's bytes are shown.

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
// {attrs, full} for one cell across every column.
export function table(caption, columns, rows, attrs = {}) {
  const body = rows.length
    ? rows.map((row) => (row.full !== undefined
      ? h("tr", row.attrs || {}, h("td", { colspan: columns.length }, row.full))
      : h("tr", row.attrs || {}, (row.cells || row).map((cell) => h("td", {}, cell)))))
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

// A key, value or header value as the chosen format: auto (JSON pretty-printed when it parses, else
// text, else hex), text, json or hex.
export function showData(text, encoding, format) {
  if (text === null || text === undefined) return h("span", { class: "muted" }, "null");
  const bytes = bytesOf(text, encoding);
  if (format === "hex" || encoding === "base64") {
    if (format === "text" && encoding === "base64") return h("span", { class: "muted" }, `(binary, ${bytes.length} B)`);
    return h("pre", { class: "hex" }, hexDump(bytes));
  }
  if (format === "auto" || format === "json") {
    try {
      const parsed = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null) return h("pre", { class: "json" }, JSON.stringify(parsed, null, 2));
    } catch {
      if (format === "json") return h("span", {}, text, " ", h("span", { class: "muted" }, "(not JSON)"));
    }
  }
  return h("span", { class: "text" }, text);
}

export function message(kind, text) {
  return h("p", { class: `msg ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}
