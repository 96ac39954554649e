// #/runs/<id>: one run's records with their metrics; sort, filter, open a trajectory.
// The server sorts, filters and pages over every record of the run (any size); the page asks for
// PAGE rows at a time. Sort and filter live in the hash's query, so Back returns to the same view.

import { get } from "./api.js";
import { badge, definitionList, h, incompleteBadge, IN_SAMPLE_NOTE, inSampleBadge, link, outcomeBadge, route, tierBadge } from "./dom.js";
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
    { key: "trajectory_id", label: "Trajectory", value: (r) => r.trajectory_id, cell: (r) => [link(open(r), r.trajectory_id, { class: "mono" }), r.in_sample ? [" ", inSampleBadge()] : null] },
    { key: "model", label: "Model", value: (r) => r.model, cell: (r) => r.model || "" },
    { key: "outcome", label: "Outcome", value: (r) => r.outcome, cell: (r) => outcomeBadge(r.outcome) },
    ...names.map(metricColumn),
  ];
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
      ["Records", run.complete ? count(total) : [count(total), " ", incompleteBadge()]],
      ["AgentLens", run.agentlens_version],
      ["Settings", settings.join("  ")],
    ]),
  ];
}

function query(state, offset) {
  return { limit: PAGE, offset, sort: state.sort, dir: state.dir, q: state.q, outcome: state.outcome, tier: state.tier };
}

export async function runPage({ parts, params }) {
  const runId = parts[1];
  const state = { sort: params.get("sort") || "position", dir: params.get("dir") || "asc", q: params.get("q") || "", outcome: params.get("outcome") || "", tier: params.get("tier") || "" };
  let answer = await get(`runs/${encodeURIComponent(runId)}`, query(state, 0)).catch((error) => {
    if (error.status !== 400 || state.sort === "position") throw error;
    Object.assign(state, { sort: "position", dir: "asc" }); // a bookmark's sort the run lacks
    return get(`runs/${encodeURIComponent(runId)}`, query(state, 0));
  });
  const { run, metric_names: names, facets } = answer;
  let records = [...answer.records];
  let asked = 0; // answers to older questions are dropped when they arrive late
  const cols = columns(run.id, names.filter((n) => n !== "in_sample")); // a badge, not a column
  const shown = h("span", { class: "muted", "aria-live": "polite", "data-shown": "" });
  const holder = h("div");
  const donors = h("p", { class: "in-sample-note", "data-in-sample": "" }, IN_SAMPLE_NOTE);
  const more = h("button", { type: "button", class: "more" });

  const remember = () => history.replaceState(null, "", route(["runs", run.id], { ...state, sort: state.sort === "position" ? "" : state.sort, dir: state.sort === "position" ? "" : state.dir }));
  const draw = () => {
    shown.textContent = `${count(records.length)} of ${count(answer.matched)} matching records shown (${count(answer.total)} in the run)`;
    donors.hidden = !records.some((r) => r.in_sample);
    more.hidden = records.length >= answer.matched;
    more.textContent = `Load ${count(Math.min(PAGE, answer.matched - records.length))} more`;
    holder.replaceChildren(sortableTable({
      columns: cols, rows: records, state, presorted: true,
      onSort: (key, dir) => { Object.assign(state, { sort: key, dir }); refresh(); },
      onRow: (r) => (location.hash = route(["trajectories", r.trajectory], { run: run.id, record: r.position })),
    }));
  };
  const refresh = async () => {
    remember();
    const mine = ++asked;
    const next = await get(`runs/${encodeURIComponent(run.id)}`, query(state, 0));
    if (mine !== asked) return;
    answer = next;
    records = [...next.records];
    draw();
  };
  let typing = null;
  const update = (key) => (value) => {
    state[key] = value;
    clearTimeout(typing);
    typing = setTimeout(refresh, key === "q" ? 250 : 0);
  };
  more.addEventListener("click", async () => {
    const mine = asked;
    const next = await get(`runs/${encodeURIComponent(run.id)}`, query(state, records.length));
    if (mine !== asked) return;
    records.push(...next.records);
    draw();
  });

  const filter = h("input", { type: "search", value: state.q, placeholder: "Filter by trajectory, task or model  ( / )", "aria-label": "Filter records", "data-filter": "", oninput: (e) => update("q")(e.target.value) });
  const controls = h("div", { class: "controls" }, filter,
    select("Outcome", state.outcome, facets.outcome, update("outcome")),
    facets.tier.length ? select("Tier", state.tier, facets.tier, update("tier")) : null, shown);
  const node = h("section", { class: "page" }, header(run, answer.total), controls, donors, holder, more);
  draw();
  return { node, title: `Run ${shortId(run.id)}` };
}
