// Small live charts of the broker's metrics on the overview: record bytes in and out and requests per
// second over the last minute, drawn as SVG polylines (no library). The data are the "metrics"
// server-sent events (totals, once a second); each rate is the difference of two totals over their time.

import { on } from "./api.js";
import { formatBytes, h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const POINTS = 60;
const WIDTH = 120;
const HEIGHT = 36;

function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  return el;
}

function chart(key, label, format) {
  const values = [];
  const line = svg("polyline", { points: "", fill: "none", stroke: "currentColor", "stroke-width": 1.5 });
  const base = svg("line", { x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5, stroke: "currentColor",
    "stroke-opacity": 0.3 });
  const picture = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: "img",
    "aria-label": `${label}, last minute` });
  picture.append(base, line);
  const now = h("span", { class: "chart-value", "data-metric": key }, "–");
  const el = h("figure", { class: "chart" }, picture, h("figcaption", {}, `${label} `, now));
  const push = (value) => {
    values.push(value);
    if (values.length > POINTS) values.shift();
    const top = Math.max(...values, 1);
    const step = WIDTH / (POINTS - 1);
    const start = WIDTH - step * (values.length - 1);
    line.setAttribute("points", values.map((v, i) =>
      `${(start + i * step).toFixed(1)},${(HEIGHT - 1 - (v / top) * (HEIGHT - 4)).toFixed(1)}`).join(" "));
    now.textContent = format(value);
  };
  return { key, el, push };
}

// The charts' section and a function that stops listening.
export function metricsCharts() {
  const charts = [
    chart("bytes_in", "bytes in/s", (v) => formatBytes(Math.round(v))),
    chart("bytes_out", "bytes out/s", (v) => formatBytes(Math.round(v))),
    chart("requests", "requests/s", (v) => v.toFixed(1)),
  ];
  let last = null;
  const off = on("metrics", (m) => {
    if (last !== null && m.at_ms > last.at_ms) {
      const seconds = (m.at_ms - last.at_ms) / 1000;
      for (const c of charts) c.push(Math.max(0, (m[c.key] - last[c.key]) / seconds));
    }
    last = m;
  });
  const el = h("section", { class: "charts", id: "metrics-charts", "aria-label": "Live metrics" },
    charts.map((c) => c.el));
  return { el, stop: off };
}
