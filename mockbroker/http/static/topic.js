// A topic's page: its configs (the ones set on it and those a broker setting changes, then every
// effective config on demand) and its records, newest first, filtered and paged, live on the first page.
// A record shows compact (one line per cell, cut with an ellipsis); its button expands the whole record.
// A key or value in the Schema Registry's wire format shows decoded through its schema (auto and json).

import { get, on } from "./api.js";
import { compactJson, debounce, formatTime, h, message, showData, table } from "./dom.js";

const enc = encodeURIComponent;

// A record's key or value: decoded through the registry when the broker did (`key_decoded`/`value_decoded`)
// and the format shows data (auto, json), with its schema id; else its bytes (with why they did not decode).
function showPart(r, part, format, open) {
  const raw = showData(r[part], r[`${part}_encoding`], format, open);
  const decoded = r[`${part}_decoded`];
  if (!decoded || (format !== "auto" && format !== "json")) return raw;
  if (decoded.error) {
    return h("span", { class: "undecoded" }, raw,
      h("span", { class: "muted decode-error" }, `schema ${decoded.schema_id}: ${decoded.error}`));
  }
  const badge = h("span", { class: "schema-id", title: `${decoded.schema_type} schema ${decoded.schema_id} (Schema Registry)` },
    `#${decoded.schema_id}`);
  const data = open ? h("pre", { class: "json decoded" }, JSON.stringify(decoded.data, null, 2))
    : h("code", { class: "data json decoded" }, compactJson(decoded.data));
  return h("span", { class: "registry" }, badge, data);
}

function field(label, input, hint) {
  const id = `f-${input.name}`;
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input, hint ? h("small", {}, hint) : null);
}

const setting = (c) => h("code", { class: "setting" }, `${c.name}=${c.value ?? "null"}`);

function configsSection(name) {
  const box = h("section", { class: "configs", "aria-labelledby": "configs-heading" },
    h("h2", { id: "configs-heading" }, "Configs"));
  get(`/topics/${enc(name)}/configs`).then(({ configs }) => {
    const own = configs.filter((c) => c.source === "TOPIC_CONFIG");
    const broker = configs.filter((c) => !c.is_default && c.source !== "TOPIC_CONFIG");
    const list = (items) => h("ul", { class: "settings" }, items.map((c) => h("li", {}, setting(c))));
    box.append(
      h("p", { id: "topic-overrides" }, "Set on this topic: ",
        own.length ? list(own) : h("span", { class: "muted" }, "nothing (broker settings and Kafka's defaults apply)")),
      ...(broker.length ? [h("p", {}, "From the broker's settings: ", list(broker))] : []),
      h("details", { id: "all-configs" }, h("summary", {}, `All ${configs.length} effective configs`),
        table("Effective configs (non-default ones marked)", ["config", "value", "source"],
          configs.map((c) => ({ attrs: c.is_default ? {} : { class: "set" },
            cells: [c.name, c.value ?? "null", c.is_default ? "default" : c.source] })),
          { class: "config-table" })));
  }).catch((err) => box.append(message("error", `Cannot show configs: ${err.message}`)));
  return box;
}

export async function records(main, [name]) {
  const topic = await get(`/topics/${enc(name)}`).catch((err) => err);
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Topic ", h("code", {}, name)));
  if (topic instanceof Error) {
    main.append(message("error", topic.message));
    return undefined;
  }
  const partitions = topic.partitions.map((p) => p.partition);
  const form = h("form", { role: "search", class: "filters", novalidate: true, "aria-label": "Filter records" },
    field("Partition", h("select", { name: "partition" }, h("option", { value: "" }, "all"),
      partitions.map((p) => h("option", { value: String(p) }, String(p))))),
    field("At or below offset", h("input", { name: "offset", inputmode: "numeric", autocomplete: "off" })),
    field("Key contains", h("input", { name: "key", autocomplete: "off" })),
    field("From (local time)", h("input", { name: "from", type: "datetime-local", step: "1" })),
    field("To (local time)", h("input", { name: "to", type: "datetime-local", step: "1" })),
    field("Show as", h("select", { name: "format" }, ["auto", "text", "json", "hex"].map((f) => h("option", { value: f }, f)))),
    field("Per page", h("select", { name: "limit" }, ["20", "50", "100", "500"].map((n) => h("option", { value: n, selected: n === "50" }, n)))),
    h("div", { class: "field" }, h("button", { type: "submit" }, "Apply")));
  const links = h("p", {}, `${partitions.length} partition${partitions.length === 1 ? "" : "s"}; batches of partition `,
    partitions.map((p) => [h("a", { href: `#/batches/${enc(name)}/${p}` }, String(p)), " "]));
  const status = h("div", { class: "status-line", role: "status", "aria-live": "polite" });
  const results = h("div", { id: "records" });
  const pager = h("div", { class: "pager" });
  // the filters start folded on a phone, where they would fill the first screen
  const filters = h("details", { class: "filters-box", open: !matchMedia("(max-width: 640px)").matches },
    h("summary", {}, "Filters and display"), form);
  main.append(links, configsSection(name), h("h2", {}, "Records"), filters, status, results, pager);
  const cursors = [];  // the cursor of each page shown (null: the newest page)
  const expanded = new Set();  // "partition:offset" of the records expanded: still expanded after a redraw
  let last = null;

  const query = (cursor) => {
    const data = new FormData(form);
    const params = new URLSearchParams({ order: "newest", limit: data.get("limit") });
    for (const key of ["partition", "offset", "key"]) if (data.get(key)) params.set(key, data.get(key).trim());
    for (const [key, param] of [["from", "from_ms"], ["to", "to_ms"]]) {
      if (data.get(key)) {
        const ms = new Date(data.get(key)).getTime();
        if (Number.isNaN(ms)) throw new Error(`${key} time is not a date`);
        params.set(param, String(ms));
      }
    }
    if (cursor) params.set("cursor", cursor);
    return params;
  };
  const cells = (r, format, open) => {
    const id = `${r.partition}:${r.offset}`;
    const toggle = h("button", { type: "button", class: "expand", "aria-expanded": String(open),
      "aria-label": `${open ? "collapse" : "expand"} record ${r.partition}-${r.offset}`,
      onclick: (event) => {
        if (expanded.has(id)) expanded.delete(id);
        else expanded.add(id);
        const tr = event.currentTarget.closest("tr");
        const again = cells(r, format, expanded.has(id));
        tr.classList.toggle("open", expanded.has(id));
        [...tr.children].forEach((td, i) => td.replaceChildren(...[again[i]].filter(Boolean)));
        tr.querySelector("button.expand").focus();
      } }, open ? "collapse" : "expand");
    return [String(r.partition), String(r.offset), h("span", { title: r.timestamp_type }, formatTime(r.timestamp)),
      showPart(r, "key", format, open),
      h("div", { class: "value" }, showPart(r, "value", format, open), toggle),
      r.headers.length ? h("ul", { class: "headers" }, r.headers.map((x) => h("li", {}, h("b", {}, x.key), ": ",
        showData(x.value, x.value_encoding, format, open)))) : null];
  };
  const draw = async () => {
    const format = new FormData(form).get("format");
    let page;
    try {
      page = await get(`/topics/${enc(name)}/records?${query(cursors.at(-1))}`);
    } catch (err) {
      results.replaceChildren(message("error", `Cannot show records: ${err.message}`));
      return;
    }
    last = page;
    const rows = page.records.map((r) => {
      const open = expanded.has(`${r.partition}:${r.offset}`);
      return { attrs: { "data-offset": r.offset, "data-partition": r.partition, class: open ? "open" : null },
        cells: cells(r, format, open) };
    });
    results.replaceChildren(table(`Newest first, page ${cursors.length + 1}`, ["partition", "offset", "timestamp", "key", "value", "headers"], rows,
      { class: "records" }));
    const more = Object.values(page.next_offsets).some((o) => o >= 0) && page.records.length > 0;
    pager.replaceChildren(
      h("button", { type: "button", disabled: cursors.length === 0, onclick: () => { cursors.pop(); draw(); } }, "Newer"),
      h("button", { type: "button", disabled: !more, onclick: () => {
        cursors.push(Object.entries(last.next_offsets).map(([p, o]) => `${p}:${o}`).join(",")); draw();
      } }, "Older"));
    status.textContent = cursors.length === 0 ? "Live: new records appear at the top." : "Paging: live updates paused.";
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); cursors.length = 0; draw(); });
  form.elements.format.addEventListener("change", draw);
  await draw();
  const refresh = debounce(() => { if (cursors.length === 0) draw(); }, 200);
  return on("records", (e) => { if (e.topic === name) refresh(); });
}
