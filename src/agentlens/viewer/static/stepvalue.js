// The step-value view of a trajectory opened from a step-value run: per channel, the evaluator's
// belief in each candidate over the steps (an SVG line chart), then each step's value G per
// channel with the channel effect (G − G under direct) beside it. All text goes in as text nodes.

import { h, shown } from "./dom.js";

const NS = "http://www.w3.org/2000/svg";
const COLORS = ["#3b6fb6", "#c8473d", "#2f8f5b", "#b7791f", "#7c4dbd", "#0f8a8a", "#a0527a", "#6b7280"];
const W = 520, H = 170, LEFT = 36, TOP = 10, PLOT = 130;

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, shown(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(shown(c)));
  return el;
}

function chart(channel, rows, gold) {
  const steps = [rows[0].index - 1, ...rows.map((r) => r.index)];
  const states = [rows[0].before, ...rows.map((r) => r.after)];
  const names = Object.keys(rows[0].before);
  const x = (i) => LEFT + ((W - LEFT - 10) * i) / Math.max(steps.length - 1, 1);
  const y = (p) => TOP + PLOT * (1 - p);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", "aria-label": `Belief per candidate (${channel})`, "data-channel": channel });
  for (const t of [0, 0.5, 1]) {
    svg.append(s("line", { x1: LEFT, x2: W - 10, y1: y(t), y2: y(t), stroke: "#e5e7eb" }));
    svg.append(s("text", { x: LEFT - 6, y: y(t) + 4, "text-anchor": "end", "font-size": 11, fill: "#6b7280" }, String(t)));
  }
  names.forEach((name, n) => {
    const points = states.map((b, i) => (b[name] == null ? null : `${x(i).toFixed(1)},${y(b[name]).toFixed(1)}`)).filter(Boolean);
    const tip = states.map((b, i) => `step ${steps[i]}: ${b[name] == null ? "–" : b[name].toFixed(3)}`).join("; ");
    svg.append(s("polyline", { points: points.join(" "), fill: "none", stroke: COLORS[n % COLORS.length], "stroke-width": name === gold ? 3 : 1.5, "data-candidate": name },
      s("title", {}, `${name}${name === gold ? " (gold)" : ""}: ${tip}`)));
  });
  const legend = h("ul", { class: "legend" }, names.map((name, n) =>
    h("li", {}, s("svg", { class: "swatch", viewBox: "0 0 10 10", width: 10, height: 10, "aria-hidden": "true" }, s("rect", { width: 10, height: 10, rx: 2, fill: COLORS[n % COLORS.length] })), name === gold ? `${name} (gold)` : name)));
  return h("figure", { class: "belief-chart" }, svg, h("figcaption", {}, `${channel}: belief after each step (step ${steps[0]}: before)`), legend);
}

function valueTable(record, channels) {
  const g = new Map(record.metrics.filter((m) => m.step != null && m.name.endsWith(":g_margin")).map((m) => [`${m.name}@${m.step}`, m.value]));
  const steps = [...new Set(record.metrics.filter((m) => m.step != null).map((m) => m.step))].sort((a, b) => a - b);
  const others = channels.includes("direct") ? channels.filter((c) => c !== "direct") : [];
  const fmt = (v) => (v == null ? "–" : v.toFixed(3));
  const head = h("tr", {}, h("th", {}, "step"), channels.map((c) => h("th", { class: "num" }, `G ${c}`)), others.map((c) => h("th", { class: "num" }, `effect ${c} − direct`)));
  const rows = steps.map((step) => {
    const base = g.get(`direct:g_margin@${step}`);
    return h("tr", {}, h("td", {}, String(step)),
      channels.map((c) => h("td", { class: "num" }, fmt(g.get(`${c}:g_margin@${step}`)))),
      others.map((c) => {
        const v = g.get(`${c}:g_margin@${step}`);
        return h("td", { class: "num" }, fmt(v == null || base == null ? null : v - base));
      }));
  });
  return h("div", { class: "table-wrap" }, h("table", { class: "data step-values" }, h("thead", {}, head), h("tbody", {}, rows)));
}

export function stepValuePanel(record) {
  const beliefs = record?.body?.beliefs;
  if (!Array.isArray(beliefs) || !beliefs.length) return null;
  const channels = [...new Set(beliefs.map((b) => b.channel))];
  const charts = channels.map((c) => chart(c, beliefs.filter((b) => b.channel === c).sort((a, b) => a.index - b.index), record.body.gold_id));
  return h("section", { class: "step-value", "aria-label": "Step value" },
    h("h2", {}, "Step value"), h("div", { class: "belief-charts" }, charts), valueTable(record, channels));
}
