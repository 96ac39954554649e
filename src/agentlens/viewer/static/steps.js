// A trajectory's phase timeline and its steps. Long texts arrive cut; "Show full" fetches the
// whole step once and fills in every cut field.

import { get } from "./api.js";
import { STAGE_NAMES, badge, h, shown, stageBadge } from "./dom.js";
import { count, dateTime } from "./format.js";

const STAGES = ["E", "I", "V", "O"];

export function timeline(steps, counts, extra = null, load = null) {
  const staged = steps.filter((s) => s.stage);
  const total = staged.length || 1;
  const legend = h("ul", { class: "legend" }, STAGES.map((st) =>
    h("li", {}, h("span", { class: `swatch stage-${st}`, "aria-hidden": "true" }),
      `${STAGE_NAMES[st]} ${count(counts[st] || 0)} (${Math.round((100 * (counts[st] || 0)) / total)} %)`)));
  const strip = h("div", { class: "strip", role: "list", "aria-label": "Phase of each tool step, in order" },
    staged.map((s) => h("button", {
      type: "button", role: "listitem", tabindex: "-1", class: `seg stage-${s.stage}`, "data-step": s.index,
      title: `step ${s.index} · ${STAGE_NAMES[s.stage] || s.stage}${s.tool_name ? ` · ${s.tool_name}` : ""}`,
      "aria-label": `step ${s.index}, ${STAGE_NAMES[s.stage] || s.stage}`,
      onclick: async () => { if (load) await load(s.index); focusStep(s.index); },
    })));
  const head = h("div", { class: "timeline-head" }, h("h2", {}, "Phases"), extra);
  if (!staged.length) return h("section", { class: "timeline" }, head, h("p", { class: "muted" }, "No tool steps to label."));
  return h("section", { class: "timeline", "aria-label": "Phase timeline" }, head, strip, legend);
}

export function focusStep(index) {
  const el = document.getElementById(`step-${index}`);
  if (!el) return;
  el.scrollIntoView({ block: "start", behavior: "instant" });
  el.focus({ preventScroll: true });
}

function block(label, text, kind, fullLength) {
  const pre = h("pre", { class: kind }, text);
  const wrap = h("div", { class: `field field-${kind}` }, h("div", { class: "field-label" }, label), pre);
  return { wrap, pre, fullLength };
}

function fullLoader(digest, index, profile) {
  let pending = null;
  return () => (pending ||= get(`trajectories/${digest}/steps/${index}`, { profile }));
}

function addShowFull(field, name, load) {
  const button = h("button", { type: "button", class: "show-full" }, `Show full (${count(field.fullLength)} chars)`);
  button.addEventListener("click", async () => {
    button.disabled = true;
    button.textContent = "Loading…";
    try {
      const full = await load();
      field.pre.textContent = shown(full[name] ?? "");
      button.remove();
    } catch (error) {
      button.disabled = false;
      button.textContent = `Could not load: ${error.message}`;
    }
  });
  field.wrap.append(h("div", { class: "cut-note" }, `showing the first ${count(field.pre.textContent.length)} chars `, button));
}

// AgentLens-Bench traces carry the label their own labeler gave ("exploration", …); shown only
// where it differs from the one computed here, so a disagreement is visible, not puzzling.
function storedBadge(step) {
  const stored = step.stored_stage ? step.stored_stage.trim().charAt(0).toUpperCase() : "";
  if (!stored || stored === step.stage) return null;
  return h("span", { class: "stored-stage muted", title: "the label stored in the trace file" },
    `stored: ${STAGE_NAMES[stored] || step.stored_stage}`);
}

function stepHead(step) {
  const tokens = step.usage ? (step.usage.prompt_tokens || 0) + (step.usage.completion_tokens || 0) : 0;
  return h("div", { class: "step-head" },
    h("span", { class: "step-index" }, `#${step.index}`),
    badge(step.kind, `kind kind-${step.kind}`),
    stageBadge(step.stage),
    storedBadge(step),
    step.tool_name ? h("span", { class: "tool mono" }, step.tool_name) : null,
    step.category ? h("span", { class: "category" }, step.category) : null,
    step.failed ? badge("error", "error-badge") : null,
    h("span", { class: "spacer" }),
    tokens ? h("span", { class: "muted" }, `${count(tokens)} tokens`) : null,
    step.timestamp ? h("time", { class: "muted", datetime: step.timestamp }, dateTime(step.timestamp)) : null);
}

export function stepItem(step, digest, profile) {
  const load = fullLoader(digest, step.index, profile);
  const item = h("li", { class: `step${step.stage ? ` phase-${step.stage}` : ""}`, id: `step-${step.index}`, tabindex: "-1", "data-index": step.index });
  item.append(stepHead(step));
  const fields = [
    ["text", step.kind === "tool" ? "Thought" : "Message", "text"],
    ["command", "Command", "command"],
    ["arguments_json", "Arguments", "arguments"],
    ["observation", "Observation", "observation"],
  ];
  for (const [name, label, kind] of fields) {
    const value = step[name];
    if (value === undefined || value === null || value === "") continue;
    if (name === "arguments_json" && step.command) continue;
    const field = block(label, value, kind, step.truncated?.[name]);
    if (field.fullLength) addShowFull(field, name, load);
    item.append(folded(step, name, value) ? fold(label, field.fullLength || value.length, field.wrap) : field.wrap);
  }
  if (step.files?.length) item.append(h("div", { class: "files muted" }, "Files: ", step.files.join(", ")));
  return item;
}

// The task and system prompts are long and repeat across runs: folded unless short.
const FOLD_CHARS = 600;

function folded(step, name, value) {
  return name === "text" && (step.kind === "user" || step.kind === "system") && value.length > FOLD_CHARS;
}

function fold(label, length, content) {
  return h("details", { class: "fold" }, h("summary", {}, `${label} (${count(length)} chars)`), content);
}

export function stepsList(steps, digest, profile) {
  return h("ol", { class: "steps", "aria-label": "Steps" }, steps.map((s) => stepItem(s, digest, profile)));
}

// j / k: next / previous step from the one in focus (or nearest the top of the window).
export function stepKeys(event) {
  if (event.key !== "j" && event.key !== "k") return;
  const items = [...document.querySelectorAll("li.step")];
  if (!items.length) return;
  let at = items.indexOf(document.activeElement.closest?.("li.step"));
  if (at < 0) at = items.findIndex((el) => el.getBoundingClientRect().bottom > 0) - (event.key === "j" ? 1 : 0);
  const next = Math.max(0, Math.min(items.length - 1, at + (event.key === "j" ? 1 : -1)));
  event.preventDefault();
  focusStep(items[next].dataset.index);
}
