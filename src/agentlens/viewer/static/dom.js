// Building the page from data. Everything from the store is hostile text: it only ever becomes a
// text node or an attribute value, never markup.

// Bidi embeddings, overrides and isolates would show a command in another order than it runs.
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

// Text as shown: every bidi control replaced by U+FFFD.
export function shown(value) {
  return String(value).replace(BIDI_CONTROLS, "\uFFFD");
}

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = shown(value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : shown(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(shown(child)));
  }
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

// A donor of the reference it was scored against: compared with a graph built from itself.
export const IN_SAMPLE_NOTE = "Marked in-sample: a donor of the reference it was scored against, so it was compared with a graph built from itself and its score flatters it (the HTML report leaves such runs out of its figures and rankings).";

export function inSampleBadge() {
  return h("span", { class: "badge in-sample", title: IN_SAMPLE_NOTE }, "in-sample");
}

export function link(href, text, props = {}) {
  return h("a", { href, ...props }, text);
}

// A hash route built from path parts and query values, each part encoded.
export function route(parts, query = {}) {
  const path = parts.map((p) => encodeURIComponent(p)).join("/");
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") params.set(k, v);
  const qs = params.toString();
  return `#/${path}${qs ? `?${qs}` : ""}`;
}

export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}`.trim() }, text);
}

// A run saved in parts whose command stopped before its last part: its records are only some.
export function incompleteBadge() {
  const note = "Its command stopped before saving every record: run the same command again to add the rest.";
  return h("span", { class: "badge error-badge", title: note }, "incomplete");
}

export function outcomeBadge(outcome) {
  const known = ["passed", "failed"].includes(outcome) ? outcome : "unknown";
  return badge(outcome || "unknown", `outcome-${known}`);
}

const TIERS = ["ideal", "solid", "lucky", "partial_fail", "off_track"];

export function tierBadge(tier) {
  return badge(tier || "none", TIERS.includes(tier) ? `tier-${tier}` : "tier-none");
}

export const STAGE_NAMES = { E: "Exploration", I: "Implementation", V: "Verification", O: "Orchestration" };

export function stageBadge(stage) {
  if (!stage) return null;
  return badge(STAGE_NAMES[stage] || stage, `stage stage-${STAGE_NAMES[stage] ? stage : "none"}`);
}

export function definitionList(pairs) {
  const dl = h("dl", { class: "facts" });
  for (const [term, value] of pairs) {
    if (value === undefined || value === null || value === "") continue;
    dl.append(h("div", {}, h("dt", {}, term), h("dd", {}, value)));
  }
  return dl;
}

export function errorBox(message) {
  return h("div", { class: "error", role: "alert" }, message);
}
