// The share-group pages (KIP-932): the list of share groups, and one share group with its members and
// assignments and each share partition's offsets and in-flight records (state, delivery count, the member
// holding the lock and its expiry on the broker clock). Share state changes with share requests and with
// the broker clock (locks run out), so both redraw the page.

import { get, on } from "./api.js";
import { debounce, formatTime, guarded, h, table } from "./dom.js";

const enc = encodeURIComponent;
const assignmentText = (a) => Object.entries(a || {}).map(([t, ps]) => `${t}: ${ps.join(", ")}`).join("; ") || "–";

function live(redrawNow) {
  const onRequests = debounce(redrawNow, 300);
  const onClock = debounce(redrawNow, 1000);  // time left moves with the broker clock, locks run out
  const offs = [on("requests", onRequests), on("clock", onClock)];
  return () => offs.forEach((off) => off());
}

export async function shareGroups(main) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Share groups"),
    h("p", {}, "KIP-932 share groups: members take records of the same partitions together, each record locked by one member at a time."));
  const box = h("div");
  main.append(box);
  const draw = async () => {
    const { share_groups: list } = await get("/share-groups");
    box.replaceChildren(table("Share groups", ["group", "state", "group epoch", "members", "share partitions", "records acquired"],
      list.map((g) => [h("a", { href: `#/share-group/${enc(g.group_id)}` }, g.group_id), g.state, String(g.group_epoch),
        String(g.members), String(g.share_partitions), String(g.acquired_records)]), { id: "share-groups-table" }));
  };
  await guarded(box, draw);
  return live(() => guarded(box, draw));
}

function recordRows(p) {
  const rows = p.records.map((r) => ({ attrs: { "data-state": r.state },
    cells: [String(r.offset), r.state, String(r.delivery_count), r.member_id || "–",
      r.lock_expiry_ms === null ? "–" : formatTime(r.lock_expiry_ms),
      r.lock_left_ms === null ? "–" : `${r.lock_left_ms} ms`] }));
  if (p.records_total > p.records.length) rows.push({ full: `${p.records_total - p.records.length} more records in flight` });
  return rows;
}

export async function shareGroup(main, [id]) {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Share group ", h("code", {}, id)));
  const box = h("div");
  main.append(box);
  const draw = async () => {
    const { group: g, partitions } = await get(`/share-groups/${enc(id)}`);
    box.replaceChildren(
      h("dl", { class: "facts" }, h("dt", {}, "state"), h("dd", {}, g.state), h("dt", {}, "group epoch"), h("dd", {}, String(g.group_epoch)),
        h("dt", {}, "assignment epoch"), h("dd", {}, String(g.assignment_epoch))),
      table("Members", ["member", "client id", "member epoch", "subscribed", "assignment"],
        g.members.map((m) => [m.member_id, m.client_id || "", String(m.member_epoch), (m.subscribed || []).join(", "), assignmentText(m.assignment)]),
        { id: "share-members-table" }),
      table("Share partitions", ["topic", "partition", "start offset", "end offset", "high watermark", "available", "acquired", "acknowledged", "archived"],
        partitions.map((p) => [h("a", { href: `#/topic/${enc(p.topic)}` }, p.topic), String(p.partition), String(p.start_offset), String(p.end_offset),
          String(p.high_watermark ?? "–"), String(p.counts.AVAILABLE), String(p.counts.ACQUIRED), String(p.counts.ACKNOWLEDGED), String(p.counts.ARCHIVED)]),
        { id: "share-partitions-table" }),
      ...partitions.map((p) => table(`In-flight records of ${p.topic}-${p.partition}`,
        ["offset", "state", "delivery count", "held by", "lock expiry (broker clock)", "lock time left"], recordRows(p),
        { class: "share-records", "data-partition": `${p.topic}-${p.partition}` })));
  };
  await guarded(box, draw);
  return live(() => guarded(box, draw));
}
