// #/trajectories/<digest>[?run=<id>&record=<n>&profile=…]: header, score panel (when opened from a
// score run), phase timeline, steps.

import { get } from "./api.js";
import { definitionList, h, IN_SAMPLE_NOTE, inSampleBadge, link, outcomeBadge, route, tierBadge } from "./dom.js";
import { count, dateTime, duration, metricText, number, shortId } from "./format.js";
import { stepItem, stepKeys, stepsList, timeline } from "./steps.js";
import { stepValuePanel } from "./stepvalue.js";

const PROFILES = ["calibrated", "paper", "sdk-compat"];

function tokensText(t) {
  const parts = [`${count(t.prompt_tokens)} prompt`, `${count(t.completion_tokens)} completion`];
  if (t.cached_tokens) parts.push(`${count(t.cached_tokens)} cached`);
  return parts.join(" · ");
}

function facts(tr) {
  const t = tr.totals;
  const categories = Object.entries(t.categories).map(([k, v]) => `${k} ${v}`).join(", ");
  const when = t.started ? `${dateTime(t.started)}${t.ended ? ` (${duration(t.started, t.ended)})` : ""}` : "";
  const outcome = h("span", {}, outcomeBadge(tr.outcome.status), tr.outcome.source ? ` from ${tr.outcome.source}` : "");
  const format = [tr.source.format, tr.source.format_version].filter(Boolean).join(" ");
  return definitionList([
    ["Task", tr.task_id],
    ["Model", tr.model],
    ["Agent", [tr.agent.name, tr.agent.version].filter(Boolean).join(" ")],
    ["Outcome", outcome],
    ["Format", format],
    ["Steps", `${count(t.steps)} (${count(t.tool_steps)} tool calls${t.errors ? `, ${count(t.errors)} errors` : ""})`],
    ["Tokens", tokensText(t)],
    ["Cost", t.cost === null || t.cost === undefined ? "" : `$${t.cost.toFixed(4)}`],
    ["Started", when],
    ["Tools", categories],
    ["Source", h("span", { class: "mono path" }, tr.source.path)],
    ["Digest", h("span", { class: "mono" }, tr.digest)],
  ]);
}

function crumbs(tr, runId) {
  const trail = [link("#/runs", "Runs")];
  if (runId) trail.push(" › ", link(route(["runs", runId]), shortId(runId)));
  else trail.push(" › ", link("#/trajectories", "Trajectories"));
  return h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, trail, " › ", tr.id);
}

function profileSwitch(tr, params) {
  const onchange = (e) => {
    const query = Object.fromEntries(params);
    location.hash = route(["trajectories", tr.digest], { ...query, profile: e.target.value });
  };
  return h("label", { class: "profile" }, "Labeler ",
    h("select", { onchange }, PROFILES.map((p) => h("option", { value: p, selected: p === tr.profile }, p))));
}

function scorePanel(record) {
  const score = record.metrics.find((m) => m.name === "score" && m.step == null);
  const tier = record.metrics.find((m) => m.name === "tier" && m.step == null);
  const rest = record.metrics.filter((m) => !["score", "tier", "in_sample"].includes(m.name) && m.step == null);
  const panel = h("aside", { class: "score-panel", "aria-label": "Scores" },
    h("h2", {}, "Record ", String(record.position), " of the run"));
  if (score) {
    panel.append(h("div", { class: "score-big" }, h("span", { class: "score-value" }, number(score.value, "score")),
      tier ? tierBadge(tier.label) : null, record.in_sample ? inSampleBadge() : null));
    if (record.in_sample) panel.append(h("p", { class: "in-sample-note" }, IN_SAMPLE_NOTE));
    if (score.reason) panel.append(h("p", { class: "reason" }, score.reason));
    if (tier?.reason) panel.append(h("p", { class: "reason" }, tier.reason));
  }
  const list = h("dl", { class: "signals" });
  for (const m of rest) {
    list.append(h("div", {}, h("dt", {}, m.name, h("span", { class: "signal-value" }, metricText(m))),
      m.reason ? h("dd", {}, m.reason) : null));
  }
  panel.append(list);
  return panel;
}

// The score panel's record: `record=N` of the run, or (a link that names only the run) the run's
// first record of this trajectory.
async function loadRecord(params, digest) {
  const runId = params.get("run");
  const position = params.get("record");
  if (!runId) return null;
  const run = encodeURIComponent(runId);
  const path = position === null
    ? `runs/${run}/trajectories/${encodeURIComponent(digest)}`
    : `runs/${run}/records/${encodeURIComponent(position)}`;
  try {
    const record = await get(path);
    return record.trajectory === digest ? record : null;
  } catch {
    return null;
  }
}

export async function trajectoryPage({ parts, params }) {
  const digest = parts[1];
  // no ?profile=: the server labels with the profile of the run it was opened from (one
  // profile per view), else the default; later pages ask for the profile it answered with
  const profile = params.get("profile") || "";
  const [tr, record] = await Promise.all([
    get(`trajectories/${encodeURIComponent(digest)}`, { profile, run: params.get("run") || "" }),
    loadRecord(params, digest),
  ]);
  const head = h("header", { class: "traj-head" }, crumbs(tr, record?.run),
    h("h1", { class: "traj-id" }, tr.id), facts(tr));
  if (tr.task) {
    const note = tr.task_length > tr.task.length ? ` (first ${count(tr.task.length)} of ${count(tr.task_length)} chars)` : "";
    head.append(h("details", { class: "task" }, h("summary", {}, `Task statement${note}`), h("pre", {}, tr.task)));
  }
  if (tr.warnings.length) head.append(h("ul", { class: "warnings" }, tr.warnings.map((w) => h("li", {}, w))));
  const list = stepsList(tr.steps, encodeURIComponent(tr.digest), tr.profile);
  const more = moreSteps(tr, list);
  const body = h("div", { class: "traj-main" },
    timeline(tr.timeline, tr.phases, profileSwitch(tr, params), more.upTo),
    stepValuePanel(record),
    h("h2", {}, `Steps (${count(tr.steps_total)})`), list, more.node);
  const layout = h("div", { class: record ? "traj-layout with-panel" : "traj-layout" }, body, record ? scorePanel(record) : null);
  const node = h("section", { class: "page trajectory" }, head, layout);
  return { node, title: tr.id, onKey: stepKeys };
}

// Steps arrive a page at a time; "Show more" (or a timeline click past the loaded ones) fetches
// the next pages, so a run of thousands of steps never arrives as one huge answer.
function moreSteps(tr, list) {
  let shown = tr.steps_offset + tr.steps.length;
  const digest = encodeURIComponent(tr.digest);
  const button = h("button", { type: "button", class: "more-steps" });
  const label = () => { button.textContent = `Show more steps (${count(shown)} of ${count(tr.steps_total)} shown)`; };
  const next = async () => {
    button.disabled = true;
    const page = await get(`trajectories/${digest}`, { profile: tr.profile, offset: shown });
    list.append(...page.steps.map((s) => stepItem(s, digest, tr.profile)));
    shown += page.steps.length;
    button.disabled = false;
    label();
    if (shown >= tr.steps_total || !page.steps.length) button.remove();
  };
  const upTo = async (index) => {
    while (index >= shown && shown < tr.steps_total) await next();
  };
  button.addEventListener("click", next);
  label();
  return { node: shown < tr.steps_total ? button : null, upTo };
}
