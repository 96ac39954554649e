// #/runs/<id>: one run's records with their metrics; sort, filter, open a trajectory.
// Sort and filter live in the hash's query, so Back from a trajectory returns to the same view.

import { get } from "./api.js";
import { badge, definitionList, h, link, outcomeBadge, route, tierBadge } from "./dom.js";
import { count, dateTime, metricText, shortId } from "./format.js";
import { sortableTable } from "./table.js";

const PAGE = 1000;

function metricOf(record, name) {
  return record.metrics.find((m) => m.name === name);
}

function metricColumn(name) {
  const sortKey = (r) => {
    const m = metricOf(r, name);
    return m ? (m.value ?? m.label) : null;
  };
  const cell = (r) => {
    const m = metricOf(r, name);
    if (m && name === "tier") return tierBadge(m.label);
    return metricText(m);
  };
  const numeric = !["tier", "mechanism"].includes(name);
  return { key: `m:${name}`, label: name, numeric, value: sortKey, cell, title: (r) => metricOf(r, name)?.reason || null };
}

function columns(runId, names) {
  const open = (r) => route(["trajectories", r.trajectory], { run: runId, record: r.position });
  return [
    { key: "position", label: "#", numeric: true, value: (r) => r.position, cell: (r) => String(r.position) },
    { key: "trajectory_id", label: "Trajectory", value: (r) => r.trajectory_id, cell: (r) => link(open(r), r.trajectory_id, { class: "mono" }) },
    { key: "model", label: "Model", value: (r) => r.model, cell: (r) => r.model || "" },
    { key: "outcome", label: "Outcome", value: (r) => r.outcome, cell: (r) => outcomeBadge(r.outcome) },
    ...names.map(metricColumn),
  ];
}

function matches(record, state) {
  if (state.outcome && (record.outcome || "unknown") !== state.outcome) return false;
  if (state.tier && metricOf(record, "tier")?.label !== state.tier) return false;
  if (!state.q) return true;
  const q = state.q.toLowerCase();
  return [record.trajectory_id, record.task_id, record.model].some((v) => v && String(v).toLowerCase().includes(q));
}

function select(label, value, options, onChange) {
  const el = h("select", { "aria-label": label, onchange: (e) => onChange(e.target.value) },
    h("option", { value: "" }, `${label}: all`),
    options.map((o) => h("option", { value: o, selected: o === value }, o)));
  return el;
}

function header(run, total) {
  const settings = Object.entries(run.settings || {}).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return [
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, link("#/runs", "Runs"), " › ", shortId(run.id)),
    h("h1", {}, "Run ", h("span", { class: "mono" }, shortId(run.id)), " ", badge(run.kind, `kind-${run.kind}`)),
    definitionList([
      ["Id", h("span", { class: "mono" }, run.id)],
      ["Scorer", run.scorer],
      ["Label", run.label],
      ["Created", dateTime(run.created)],
      ["Records", count(total)],
      ["AgentLens", run.agentlens_version],
      ["Settings", settings.join("  ")],
    ]),
  ];
}

export async function runPage({ parts, params }) {
  const runId = parts[1];
  const first = await get(`runs/${encodeURIComponent(runId)}`, { limit: PAGE });
  const { run, metric_names: names } = first;
  const records = [...first.records];
  const state = { sort: params.get("sort") || "position", dir: params.get("dir") || "asc", q: params.get("q") || "", outcome: params.get("outcome") || "", tier: params.get("tier") || "" };
  const cols = columns(run.id, names);
  const tiers = [...new Set(records.map((r) => metricOf(r, "tier")?.label).filter(Boolean))].sort();
  const outcomes = [...new Set(records.map((r) => r.outcome || "unknown"))].sort();
  const shown = h("span", { class: "muted", "aria-live": "polite" });
  const holder = h("div");
  const more = h("button", { type: "button", class: "more" });

  const remember = () => history.replaceState(null, "", route(["runs", run.id], { ...state, sort: state.sort === "position" ? "" : state.sort, dir: state.sort === "position" ? "" : state.dir }));
  const draw = () => {
    const rows = records.filter((r) => matches(r, state));
    shown.textContent = `${count(rows.length)} of ${count(records.length)} records shown` + (records.length < first.total ? ` (${count(first.total)} in the run)` : "");
    more.hidden = records.length >= first.total;
    more.textContent = `Load ${count(Math.min(PAGE, first.total - records.length))} more`;
    holder.replaceChildren(sortableTable({
      columns: cols, rows, state,
      onSort: (key, dir) => { Object.assign(state, { sort: key, dir }); remember(); draw(); },
      onRow: (r) => (location.hash = route(["trajectories", r.trajectory], { run: run.id, record: r.position })),
    }));
  };
  const update = (key) => (value) => { state[key] = value; remember(); draw(); };
  more.addEventListener("click", async () => {
    const next = await get(`runs/${encodeURIComponent(run.id)}`, { limit: PAGE, offset: records.length });
    records.push(...next.records);
    draw();
  });

  const filter = h("input", { type: "search", value: state.q, placeholder: "Filter by trajectory, task or model  ( / )", "aria-label": "Filter records", "data-filter": "", oninput: (e) => update("q")(e.target.value) });
  const controls = h("div", { class: "controls" }, filter,
    select("Outcome", state.outcome, outcomes, update("outcome")),
    tiers.length ? select("Tier", state.tier, tiers, update("tier")) : null, shown);
  const node = h("section", { class: "page" }, header(run, first.total), controls, holder, more);
  draw();
  return { node, title: `Run ${shortId(run.id)}` };
}
