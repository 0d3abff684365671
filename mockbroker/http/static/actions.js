// The actions page: forms that change the broker (topics, a record, compaction, retention, the clock,
// fault rules, nodes and leaders). Each form shows the broker's answer, or its error message, right below
// itself.

import { api, get } from "./api.js";
import { h, message } from "./dom.js";

let counter = 0;

function input(label, { tag = "input", options = [], ...attrs }, hint) {
  const id = `a-${++counter}`;
  const el = tag === "select" ? h("select", { ...attrs, id }, options)
    : tag === "textarea" ? h("textarea", { ...attrs, id })
      : h("input", { autocomplete: "off", ...attrs, id });
  return h("div", { class: "field" }, h("label", { for: id }, label), el, hint ? h("small", {}, hint) : null);
}

// A form section: `build` returns the fields, `send(data)` the API call; the result goes into its output.
function actionForm(title, id, fields, buttonText, send, describe) {
  const output = h("div", { class: "output", "aria-live": "polite" });
  const form = h("form", { id, novalidate: true, "aria-labelledby": `${id}-title` }, fields,
    h("div", { class: "field" }, h("button", { type: "submit" }, buttonText)));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = Object.fromEntries(new FormData(form).entries());
    output.replaceChildren(message("info", "working…"));
    try {
      const result = await send(data);
      output.replaceChildren(message("ok", describe(result, data)));
    } catch (err) {
      output.replaceChildren(message("error", `${title} failed: ${err.message}`));
    }
  });
  return h("section", { class: "card", "aria-labelledby": `${id}-title` }, h("h2", { id: `${id}-title` }, title), form, output);
}

function num(text, what = "this field") {
  if (text === undefined || text.trim() === "") return undefined;
  const value = Number(text.trim());
  if (Number.isNaN(value)) throw new Error(`${what} must be a number, got "${text.trim()}"`);
  return value;
}
const opt = (text) => (text === undefined || text.trim() === "" ? undefined : text.trim());

function pairs(text, what) {
  // "a=1\nb=2" -> [["a", "1"], ["b", "2"]]
  return (text || "").split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
    const at = line.indexOf("=");
    if (at <= 0) throw new Error(`${what}: "${line}" is not key=value`);
    return [line.slice(0, at).trim(), line.slice(at + 1)];
  });
}

export async function actions(main) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Actions"));
  let names = { api_keys: {}, error_codes: {} };
  try {
    names = await get("/names");
  } catch (err) {
    main.append(message("error", err.message));
  }
  const apiOptions = Object.entries(names.api_keys).sort((a, b) => a[1] - b[1]).map(([n, k]) => h("option", { value: n }, `${k} ${n}`));
  const faultList = h("div", { id: "fault-list" });
  const showFaults = async () => {
    const { faults } = await get("/faults");
    faultList.replaceChildren(faults.length
      ? h("ul", {}, faults.map((f) => h("li", {}, `${f.api_name} (${f.api_key}): ${f.action}${f.error ? ` ${f.error}` : ""}${f.delay_s ? ` ${f.delay_s} s` : ""}, ${f.count} left${f.topic ? `, topic ${f.topic}` : ""}${f.partition !== null && f.partition !== undefined ? `-${f.partition}` : ""}`)))
      : h("p", { class: "muted" }, "No fault rules waiting."));
  };

  const nodeList = h("div", { id: "node-list" });
  const showNodes = async () => {
    const { nodes } = await get("/nodes");
    nodeList.replaceChildren(h("ul", {}, nodes.map((n) => h("li", {}, `node ${n.node_id}${n.rack ? ` (rack ${n.rack})` : ""}: ${n.alive ? "running" : "stopped"}`))));
  };
  const nodeCall = (verb) => async (d) => {
    const id = num(d.node, "node");
    if (id === undefined) throw new Error("node is required, e.g. 2");
    const r = await api("POST", `/nodes/${id}/${verb}`);
    await showNodes();
    return r;
  };
  const aliveText = (r, d) => `Node ${d.node.trim()} is ${r.nodes.find((n) => String(n.node_id) === d.node.trim())?.alive ? "running" : "stopped"}.`;

  main.append(h("div", { class: "cards" },
    actionForm("Create a topic", "create-topic", [
      input("Name", { name: "name" }),
      input("Partitions", { name: "partitions", inputmode: "numeric" }, "empty: the broker's default"),
      input("Config", { tag: "textarea", name: "config", rows: "2" }, "one key=value a line, e.g. cleanup.policy=compact"),
    ], "Create", (d) => api("POST", "/topics", { name: d.name.trim(), partitions: num(d.partitions, "partitions"), config: Object.fromEntries(pairs(d.config, "config")) }),
    (r) => `Created topic ${r.name} with ${r.partitions.length} partition(s).`),

    actionForm("Delete a topic", "delete-topic", [input("Name", { name: "name" })], "Delete",
      (d) => api("DELETE", `/topics/${encodeURIComponent(d.name.trim())}`), (r) => `Deleted topic ${r.deleted}.`),

    actionForm("Produce a record", "produce", [
      input("Topic", { name: "topic" }),
      input("Partition", { name: "partition", inputmode: "numeric" }, "empty: 0"),
      input("Key", { name: "key" }, "empty: null"),
      input("Value", { tag: "textarea", name: "value", rows: "3" }),
      input("Headers", { tag: "textarea", name: "headers", rows: "2" }, "one key=value a line"),
    ], "Produce", (d) => api("POST", `/topics/${encodeURIComponent(d.topic.trim())}/records`, {
      key: d.key === "" ? null : d.key, value: d.value, partition: num(d.partition, "partition"),
      headers: pairs(d.headers, "headers").map(([key, value]) => ({ key, value })),
    }), (r) => `Appended to ${r.topic}-${r.partition} at offset ${r.offset}.`),

    actionForm("Run compaction", "compact", [
      input("Topic", { name: "topic" }), input("Partition", { name: "partition", inputmode: "numeric" }, "empty: every partition"),
    ], "Compact", (d) => api("POST", "/compact", { topic: d.topic.trim(), partition: num(d.partition, "partition") }),
    (r) => `Compacted ${r.compacted}: ${JSON.stringify(r.result)}`),

    actionForm("Run retention", "retention", [input("Topic", { name: "topic" }, "empty: every topic")], "Apply retention",
      (d) => api("POST", "/retention", { topic: opt(d.topic) }), (r) => `Retention deleted ${r.deleted_segments} segment(s).`),

    actionForm("Advance the broker clock", "advance", [input("Seconds", { name: "seconds", inputmode: "decimal" })], "Advance",
      (d) => {
        const seconds = num(d.seconds, "seconds");
        if (seconds === undefined) throw new Error("seconds is required, e.g. 60 or 0.5");
        return api("POST", "/clock/advance", { seconds });
      }, (r) => `The broker clock moved ${r.advanced_seconds} s, to ${new Date(r.now_ms).toISOString()}.`),

    h("section", { class: "card", "aria-labelledby": "faults-title" }, h("h2", { id: "faults-title" }, "Fault rules"), faultList,
      actionForm("Add a fault rule", "add-fault", [
        input("API", { tag: "select", name: "api_key", options: apiOptions }),
        input("Kind", { tag: "select", name: "kind", options: ["error", "drop before", "drop after", "delay"].map((k) => h("option", { value: k }, k)) }),
        input("Error code or delay", { name: "value", list: "error-codes" }, "an error name for error, seconds for delay"),
        h("datalist", { id: "error-codes" }, Object.keys(names.error_codes).map((n) => h("option", { value: n }))),
        input("Count", { name: "count", inputmode: "numeric" }, "empty: 1"),
        input("Topic", { name: "topic" }, "optional"), input("Partition", { name: "partition", inputmode: "numeric" }, "optional"),
      ], "Add rule", async (d) => {
        const body = { api_key: d.api_key, count: num(d.count, "count"), topic: opt(d.topic), partition: num(d.partition, "partition") };
        if (d.kind === "error") body.error = /^-?\d+$/.test(d.value.trim()) ? Number(d.value) : d.value.trim();
        else if (d.kind === "delay") body.delay = num(d.value, "delay");
        else body.drop = d.kind.split(" ")[1];
        const r = await api("POST", "/faults", body);
        await showFaults();
        return r;
      }, (r) => `Added: ${r.fault.api_name} ${r.fault.action}${r.fault.error ? ` ${r.fault.error}` : ""}.`),
      actionForm("Clear fault rules", "clear-faults", [], "Clear all", async () => {
        const r = await api("DELETE", "/faults");
        await showFaults();
        return r;
      }, (r) => `Cleared ${r.cleared} rule(s).`)),

    h("section", { class: "card", "aria-labelledby": "nodes-title" }, h("h2", { id: "nodes-title" }, "Nodes and leaders"), nodeList,
      actionForm("Stop a node", "stop-node", [input("Node", { name: "node", inputmode: "numeric" }, "its listeners close, its leaders move")],
        "Stop", nodeCall("stop"), aliveText),
      actionForm("Start a node", "start-node", [input("Node", { name: "node", inputmode: "numeric" })], "Start", nodeCall("start"), aliveText),
      actionForm("Move a leader", "move-leader", [
        input("Topic", { name: "topic" }), input("Partition", { name: "partition", inputmode: "numeric" }, "empty: 0"),
        input("To node", { name: "node", inputmode: "numeric" }, "a live in-sync replica"),
      ], "Move", (d) => api("POST", "/leaders", { topic: d.topic.trim(), partition: num(d.partition, "partition") ?? 0, node: num(d.node, "node") }),
      (r, d) => `${d.topic.trim()}-${num(d.partition) ?? 0} is led by node ${r.leader}, leader epoch ${r.leader_epoch}; ISR ${r.isr.join(", ")}.`))));
  await showFaults().catch((err) => faultList.replaceChildren(message("error", err.message)));
  await showNodes().catch((err) => nodeList.replaceChildren(message("error", err.message)));
  return undefined;
}
