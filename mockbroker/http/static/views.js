// The reading pages: overview, a topic's records, a partition's batches, producers, transactions, groups
// and one group, the request log. Each view renders into `main` and returns a function that stops its
// live updates (or nothing).

import { get, on } from "./api.js";
import { formatBytes, formatTime, h, hexDump, message, showData, table } from "./dom.js";

const enc = encodeURIComponent;
const topicLink = (name) => h("a", { href: `#/topic/${enc(name)}` }, name);

// Calls fn once, `ms` after the first of a burst of calls (a steady stream of events still redraws).
function debounce(fn, ms) {
  let timer = null;
  return () => {
    if (timer !== null) return;
    timer = setTimeout(() => { timer = null; fn(); }, ms);
  };
}

async function guarded(main, render) {
  try {
    await render();
  } catch (err) {
    main.append(message("error", err.message));
  }
}

export async function overview(main) {
  const box = h("div");
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Overview"), box);
  const draw = async () => {
    const o = await get("/overview");
    const topics = o.topics.filter((t) => !t.internal);
    box.replaceChildren(
      h("dl", { class: "facts" },
        h("dt", {}, "bootstrap servers"), h("dd", {}, h("code", {}, o.bootstrap_servers)),
        h("dt", {}, "cluster id"), h("dd", {}, h("code", {}, o.cluster_id)),
        h("dt", {}, "controller"), h("dd", {}, `node ${o.controller_id}`),
        h("dt", {}, "topics"), h("dd", {}, String(topics.length))),
      table("Nodes and listeners", ["node", "listener", "bind", "advertised", "protocol"],
        o.listeners.map((l) => [String(l.node_id), l.name, `${l.host}:${l.port}`, l.advertised, l.security_protocol])),
      table("Topics", ["topic", "partitions", "records", "bytes", "records/s", "config overrides"],
        o.topics.map((t) => [topicLink(t.name), String(t.partitions.length), String(t.records), formatBytes(t.size_bytes),
          String(t.records_per_second), Object.entries(t.config).map(([k, v]) => `${k}=${v}`).join(", ")]),
        { id: "topics-table" }),
      table("Partitions", ["topic", "partition", "leader", "epoch", "log start", "high watermark", "last stable", "batches", "bytes"],
        o.topics.flatMap((t) => t.partitions.map((p) => [topicLink(t.name),
          h("a", { href: `#/batches/${enc(t.name)}/${p.partition}` }, String(p.partition)), String(p.leader),
          String(p.leader_epoch), String(p.log_start_offset), String(p.high_watermark), String(p.last_stable_offset),
          String(p.batches), formatBytes(p.size_bytes)]))));
  };
  await guarded(box, draw);
  const redraw = debounce(() => guarded(box, draw), 300);
  const offs = [on("records", redraw), on("topics", redraw)];
  const timer = setInterval(redraw, 5000);  // record rates decay without events
  return () => { offs.forEach((off) => off()); clearInterval(timer); };
}

export async function topics(main) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Records"));
  await guarded(main, async () => {
    const { topics: list } = await get("/topics");
    main.append(list.length
      ? h("ul", { class: "topic-list" }, list.map((t) => h("li", {}, topicLink(t.name), ` (${t.partitions} partitions)`)))
      : message("info", "No topics yet: create one under Actions, or let a producer auto-create it."));
  });
}

function field(label, input, hint) {
  const id = `f-${input.name}`;
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input, hint ? h("small", {}, hint) : null);
}

export async function records(main, [name]) {
  const topic = await get(`/topics/${enc(name)}`).catch((err) => err);
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Records of ", h("code", {}, name)));
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
    field("From time", h("input", { name: "from", type: "datetime-local", step: "1" }), "your local time"),
    field("To time", h("input", { name: "to", type: "datetime-local", step: "1" })),
    field("Show as", h("select", { name: "format" }, ["auto", "text", "json", "hex"].map((f) => h("option", { value: f }, f)))),
    field("Per page", h("select", { name: "limit" }, ["20", "50", "100", "500"].map((n) => h("option", { value: n, selected: n === "50" }, n)))),
    h("div", { class: "field" }, h("button", { type: "submit" }, "Apply")));
  const links = h("p", {}, "Batches of partition ", partitions.map((p) => [h("a", { href: `#/batches/${enc(name)}/${p}` }, String(p)), " "]));
  const status = h("div", { class: "status-line", role: "status", "aria-live": "polite" });
  const results = h("div", { id: "records" });
  const pager = h("div", { class: "pager" });
  main.append(links, form, status, results, pager);
  const cursors = [];  // the cursor of each page shown (null: the newest page)
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
    const rows = page.records.map((r) => ({
      attrs: { "data-offset": r.offset, "data-partition": r.partition },
      cells: [String(r.partition), String(r.offset), h("span", { title: r.timestamp_type }, formatTime(r.timestamp)),
        showData(r.key, r.key_encoding, format), showData(r.value, r.value_encoding, format),
        r.headers.length ? h("ul", { class: "headers" }, r.headers.map((x) => h("li", {}, h("b", {}, x.key), ": ",
          showData(x.value, x.value_encoding, format)))) : ""],
    }));
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

export async function batches(main, [name, partition]) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Batches of ", h("code", {}, `${name}-${partition}`)),
    h("p", {}, h("a", { href: `#/topic/${enc(name)}` }, "records of this topic")));
  const box = h("div");
  main.append(box);
  const opened = new Set();  // base offsets whose bytes are shown: shown again after a live redraw
  const showRaw = async (b, raw, button) => {
    button.disabled = true;
    opened.add(b.base_offset);
    try {
      const got = await get(`/topics/${enc(name)}/batches?partition=${enc(partition)}&base_offset=${b.base_offset}&raw=true`);
      if (!got.batches.length) throw new Error(`batch ${b.base_offset} is gone (compacted or deleted)`);
      const bytes = Uint8Array.from(atob(got.batches[0].raw_base64), (c) => c.charCodeAt(0));
      raw.replaceChildren(h("pre", { class: "hex", tabindex: "0", "aria-label": `bytes of batch ${b.base_offset}` }, hexDump(bytes)));
    } catch (err) {
      raw.replaceChildren(message("error", err.message));
      opened.delete(b.base_offset);
      button.disabled = false;
    }
  };
  const draw = async () => {
    const { batches: list } = await get(`/topics/${enc(name)}/batches?partition=${enc(partition)}`);
    const loads = [];
    box.replaceChildren(table("Stored batches, oldest first",
      ["offsets", "records", "codec", "bytes", "producer id / epoch", "sequences", "flags", "timestamps", "leader epoch", "raw"],
      list.flatMap((b) => {
        const flags = [b.is_transactional ? "transactional" : "", b.is_control ? `control ${b.control_type || ""}` : ""].filter(Boolean).join(", ");
        const raw = h("div", { class: "raw" });
        const button = h("button", { type: "button", onclick: () => showRaw(b, raw, button) }, "show bytes");
        if (opened.has(b.base_offset)) loads.push(() => showRaw(b, raw, button));
        const times = b.base_timestamp === b.max_timestamp ? formatTime(b.max_timestamp)
          : `${formatTime(b.base_timestamp)} … ${formatTime(b.max_timestamp)}`;
        return [[`${b.base_offset}–${b.last_offset}`, String(b.record_count), b.codec, String(b.size),
          b.producer_id >= 0 ? `${b.producer_id} / ${b.producer_epoch}` : "–",
          b.base_sequence >= 0 ? `${b.base_sequence}–${b.last_sequence}` : "–", flags || "–", times,
          String(b.partition_leader_epoch), button], { attrs: { class: "raw-row" }, full: raw }];
      }), { class: "batches" }));
    await Promise.all(loads.map((load) => load()));
  };
  await guarded(box, draw);
  return on("records", (e) => { if (e.topic === name && String(e.partition) === String(partition)) guarded(box, draw); });
}

export async function producers(main) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Producers"));
  const box = h("div");
  main.append(box);
  const draw = async () => {
    const { producers: list } = await get("/producers");
    box.replaceChildren(table("Producer state per partition", ["topic", "partition", "producer id", "epoch", "last sequence", "last write", "open transaction from", "recent batches (sequences → offsets)"],
      list.map((p) => [topicLink(p.topic), String(p.partition), String(p.producer_id), String(p.producer_epoch), String(p.last_sequence),
        formatTime(p.last_timestamp), p.current_txn_start_offset >= 0 ? String(p.current_txn_start_offset) : "–",
        p.batches.map((b) => `${b.first_sequence}–${b.last_sequence} → ${b.first_offset}–${b.last_offset}`).join("; ")])));
  };
  await guarded(box, draw);
  return on("records", debounce(() => guarded(box, draw), 300));
}

export async function transactions(main) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Transactions"));
  const box = h("div");
  main.append(box);
  const draw = async () => {
    const { transactions: list } = await get("/transactions");
    box.replaceChildren(table("Transactional ids", ["transactional id", "state", "producer id / epoch", "timeout", "time left", "partitions", "group offsets held"],
      list.map((t) => [t.transactional_id, t.state, `${t.producer_id} / ${t.producer_epoch}`, `${t.timeout_ms} ms`,
        t.timeout_left_ms === null || t.timeout_left_ms === undefined ? "–" : `${t.timeout_left_ms} ms`,
        (t.partitions || []).map((p) => (Array.isArray(p) ? p.join("-") : `${p.topic}-${p.partition}`)).join(", "),
        Object.keys(t.pending_offsets || {}).join(", ")])));
  };
  await guarded(box, draw);
  const redraw = debounce(() => guarded(box, draw), 300);
  const tick = debounce(() => guarded(box, draw), 1000);  // the time left moves with the broker clock
  const offs = [on("records", redraw), on("clock", tick)];
  return () => offs.forEach((off) => off());
}

export async function groups(main) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Consumer groups"));
  const box = h("div");
  main.append(box);
  const draw = (list) => box.replaceChildren(table("Groups (classic and KIP-848)", ["group", "type", "protocol", "state", "generation / epoch", "members"],
    list.map((g) => [h("a", { href: `#/group/${enc(g.group_id)}` }, g.group_id), g.group_type || "", [g.protocol_type, g.protocol].filter(Boolean).join(" / "),
      g.state, String(g.generation_or_epoch ?? ""), String((g.members || []).length)]), { id: "groups-table" }));
  await guarded(box, async () => draw((await get("/groups")).groups));
  return on("groups", (e) => draw(e.groups));
}

export async function group(main, [id]) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Group ", h("code", {}, id)));
  const box = h("div");
  main.append(box);
  const draw = async () => {
    const { group: g, offsets } = await get(`/groups/${enc(id)}`);
    box.replaceChildren(
      h("dl", { class: "facts" }, h("dt", {}, "state"), h("dd", {}, g.state), h("dt", {}, "type"), h("dd", {}, g.group_type || "–"),
        h("dt", {}, "generation / epoch"), h("dd", {}, String(g.generation_or_epoch ?? "–")), h("dt", {}, "leader"), h("dd", {}, g.leader || "–")),
      table("Members", ["member", "client id", "instance id", "member epoch", "assignment"],
        (g.members || []).map((m) => [m.member_id, m.client_id || "", m.instance_id || "–", m.member_epoch ?? "–",
          Object.entries(m.assignment || {}).map(([t, ps]) => `${t}: ${ps.join(", ")}`).join("; ")])),
      table("Committed offsets and lag", ["topic", "partition", "committed", "high watermark", "lag"],
        offsets.map((o) => [topicLink(o.topic), String(o.partition), String(o.committed ?? "–"), String(o.high_watermark ?? "–"), String(o.lag ?? "–")]),
        { id: "lag-table" }));
  };
  await guarded(box, draw);
  const redraw = debounce(() => guarded(box, draw), 300);
  const offs = [on("groups", redraw), on("records", redraw)];
  return () => offs.forEach((off) => off());
}

export async function requests(main) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Request log"), h("p", {}, "The requests the broker received, newest first; new ones arrive live."));
  const filter = h("input", { id: "request-filter", name: "filter", type: "search", autocomplete: "off" });
  const body = h("tbody");
  const wrap = h("div", { class: "scroll" }, h("table", { id: "requests-table" }, h("caption", {}, "Requests received"),
    h("thead", {}, h("tr", {}, ["time", "API", "version", "client id", "correlation id", "connection"].map((c) => h("th", { scope: "col" }, c)))), body));
  main.append(h("div", { class: "field" }, h("label", { for: "request-filter" }, "Show only rows containing"), filter,
    h("small", {}, "an API name, a client id…")), wrap);
  const matches = (tr) => !filter.value || tr.textContent.toLowerCase().includes(filter.value.trim().toLowerCase());
  const row = (r) => {
    const tr = h("tr", {}, [formatTime(r.time_ms), `${r.api_name ?? ""} (${r.api_key})`, String(r.api_version),
      r.client_id ?? "", String(r.correlation_id), String(r.connection_id ?? "")].map((c) => h("td", {}, c)));
    tr.hidden = !matches(tr);
    return tr;
  };
  const add = (list) => {
    for (const r of list) body.prepend(row(r));
    while (body.children.length > 500) body.lastChild.remove();
  };
  filter.addEventListener("input", () => { for (const tr of body.children) tr.hidden = !matches(tr); });
  await guarded(main, async () => add((await get("/requests?limit=200")).requests));
  return on("requests", (e) => add(e.requests));
}
