// The reading pages: overview, a topic's records, a partition's batches, producers, transactions, groups
// and one group, the request log. Each view renders into `main` and returns a function that stops its
// live updates (or nothing).

import { get, on } from "./api.js";
import { metricsCharts } from "./charts.js";
import { debounce, formatBytes, formatTime, guarded, h, hexDump, message, table } from "./dom.js";

const enc = encodeURIComponent;
const topicLink = (name) => h("a", { href: `#/topic/${enc(name)}` }, name);

// Internal topics (Kafka's, and any name starting with "__") come after the user's and are hidden unless
// the user asks for them; the choice is remembered in localStorage.
const SHOW_INTERNAL = "mockbroker.showInternalTopics";
const isInternal = (t) => t.internal || t.name.startsWith("__");

function showInternal() {
  try {
    return localStorage.getItem(SHOW_INTERNAL) === "1";
  } catch {
    return false;  // storage disabled: hidden
  }
}

// The user's topics, then the internal ones when shown; and a checkbox that shows or hides them.
function visibleTopics(list) {
  const mine = list.filter((t) => !isInternal(t));
  return showInternal() ? [...mine, ...list.filter(isInternal)] : mine;
}

function internalToggle(redraw) {
  const box = h("input", { type: "checkbox", id: "show-internal", name: "show-internal", checked: showInternal(),
    onchange: () => {
      try {
        localStorage.setItem(SHOW_INTERNAL, box.checked ? "1" : "0");
      } catch { /* not remembered */ }
      redraw();
    } });
  const count = h("span", { class: "muted" });
  const label = h("label", { class: "toggle" }, box, " Show internal topics ", count);
  return { label, setCount: (n) => { count.textContent = `(${n})`; } };
}

export async function overview(main) {
  const facts = h("div");
  const box = h("div");
  let toggle = null;
  const draw = async () => {
    const o = await get("/overview");
    const mine = o.topics.filter((t) => !isInternal(t));
    const topics = visibleTopics(o.topics);
    toggle.setCount(o.topics.length - mine.length);
    facts.replaceChildren(
      h("dl", { class: "facts" },
        h("dt", {}, "bootstrap servers"), h("dd", {}, h("code", {}, o.bootstrap_servers)),
        h("dt", {}, "cluster id"), h("dd", {}, h("code", {}, o.cluster_id)),
        h("dt", {}, "controller"), h("dd", {}, `node ${o.controller_id}`),
        h("dt", {}, "topics"), h("dd", {}, String(mine.length))),
      table("Nodes and listeners", ["node", "listener", "bind", "advertised", "protocol"],
        o.listeners.map((l) => [String(l.node_id), l.name, `${l.host}:${l.port}`, l.advertised, l.security_protocol])));
    box.replaceChildren(
      table("Topics", ["topic", "partitions", "records", "bytes", "records/s", "config overrides"],
        topics.map((t) => ({ attrs: isInternal(t) ? { class: "internal" } : {},
          cells: [topicLink(t.name), String(t.partitions.length), String(t.records), formatBytes(t.size_bytes),
            String(t.records_per_second), Object.entries(t.config).map(([k, v]) => `${k}=${v}`).join(", ")] })),
        { id: "topics-table" }),
      table("Partitions", ["topic", "partition", "leader", "epoch", "log start", "high watermark", "last stable", "batches", "bytes"],
        topics.flatMap((t) => t.partitions.map((p) => [topicLink(t.name),
          h("a", { href: `#/batches/${enc(t.name)}/${p.partition}` }, String(p.partition)), String(p.leader),
          String(p.leader_epoch), String(p.log_start_offset), String(p.high_watermark), String(p.last_stable_offset),
          String(p.batches), formatBytes(p.size_bytes)])), { id: "partitions-table" }));
  };
  toggle = internalToggle(() => guarded(box, draw));
  const charts = metricsCharts();
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Overview"), charts.el, facts,
    h("p", { class: "table-tools" }, toggle.label), box);
  await guarded(box, draw);
  const redraw = debounce(() => guarded(box, draw), 300);
  const offs = [on("records", redraw), on("topics", redraw), charts.stop];
  const timer = setInterval(redraw, 5000);  // record rates decay without events
  return () => { offs.forEach((off) => off()); clearInterval(timer); };
}

export async function topics(main) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Records"));
  const box = h("div");
  const draw = async () => {
    const { topics: all } = await get("/topics");
    const list = visibleTopics(all);
    toggle.setCount(all.length - all.filter((t) => !isInternal(t)).length);
    box.replaceChildren(list.length
      ? h("ul", { class: "topic-list" }, list.map((t) => h("li", {}, topicLink(t.name), ` (${t.partitions} partitions)`)))
      : message("info", "No topics of your own yet: create one under Actions, or let a producer auto-create it."));
  };
  const toggle = internalToggle(() => guarded(box, draw));
  main.append(h("p", { class: "table-tools" }, toggle.label), box);
  await guarded(box, draw);
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
