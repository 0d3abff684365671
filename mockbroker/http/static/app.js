// The console's entry point: hash routes to views, the navigation's current page, live status and clock.

import { connectEvents, get, on } from "./api.js";
import { actions } from "./actions.js";
import { formatTime } from "./dom.js";
import { shareGroup, shareGroups } from "./share.js";
import { records } from "./topic.js";
import * as views from "./views.js";

const routes = [
  [/^\/overview$/, "overview", views.overview],
  [/^\/topics$/, "topics", views.topics],
  [/^\/topic\/([^/]+)$/, "topics", records],
  [/^\/batches\/([^/]+)\/(\d+)$/, "topics", views.batches],
  [/^\/producers$/, "producers", views.producers],
  [/^\/transactions$/, "transactions", views.transactions],
  [/^\/groups$/, "groups", views.groups],
  [/^\/group\/([^/]+)$/, "groups", views.group],
  [/^\/share-groups$/, "share-groups", shareGroups],
  [/^\/share-group\/([^/]+)$/, "share-groups", shareGroup],
  [/^\/actions$/, "actions", actions],
  [/^\/requests$/, "requests", views.requests],
];

const main = document.getElementById("view");
let stop = null;
let current = 0;

async function show() {
  const path = location.hash.replace(/^#/, "") || "/overview";
  const [pattern, section, view] = routes.find(([re]) => re.test(path)) || routes[0];
  const args = (path.match(pattern) || []).slice(1).map(decodeURIComponent);
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.section === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (typeof stop === "function") stop();
  stop = null;
  const mine = ++current;
  const stopper = await view(main, args);
  if (mine !== current) {
    if (typeof stopper === "function") stopper();  // the user moved on while this view loaded
    return;
  }
  stop = stopper;
  document.title = `${main.querySelector("h1")?.textContent || "console"} · mockbroker`;
  main.querySelector("h1")?.focus({ preventScroll: true });
}

const live = document.getElementById("live");
const clock = document.getElementById("clock");
const setClock = (ms) => { clock.textContent = formatTime(ms); clock.setAttribute("datetime", new Date(ms).toISOString()); };
connectEvents((up) => {
  live.textContent = up ? "live" : "reconnecting…";
  live.className = `live ${up ? "on" : "off"}`;
});
on("clock", (e) => setClock(e.now_ms));
get("/clock").then((c) => setClock(c.now_ms)).catch(() => {});
window.addEventListener("hashchange", show);
show();
