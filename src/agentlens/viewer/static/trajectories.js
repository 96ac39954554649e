// #/trajectories: every stored trajectory, filtered by task, model, outcome and format.

import { get } from "./api.js";
import { h, link, outcomeBadge, route } from "./dom.js";
import { count, dateTime } from "./format.js";
import { sortableTable } from "./table.js";

const FILTERS = [["model", "Model"], ["outcome", "Outcome"], ["source_format", "Format"]];

const COLUMNS = [
  { key: "trajectory_id", label: "Trajectory", value: (r) => r.trajectory_id, cell: (r) => link(route(["trajectories", r.digest]), r.trajectory_id, { class: "mono" }) },
  { key: "task_id", label: "Task", value: (r) => r.task_id, cell: (r) => r.task_id || "" },
  { key: "model", label: "Model", value: (r) => r.model, cell: (r) => r.model || "" },
  { key: "source_format", label: "Format", value: (r) => r.source_format, cell: (r) => r.source_format },
  { key: "outcome", label: "Outcome", value: (r) => r.outcome, cell: (r) => outcomeBadge(r.outcome) },
  { key: "n_steps", label: "Steps", numeric: true, value: (r) => r.n_steps, cell: (r) => count(r.n_steps) },
  { key: "added", label: "Added", value: (r) => r.added, cell: (r) => dateTime(r.added) },
];

export async function trajectoriesPage({ params }) {
  const query = Object.fromEntries(["task", "q", ...FILTERS.map(([k]) => k)].map((k) => [k, params.get(k) || ""]));
  const found = await get("trajectories", { ...query, limit: 1000 });
  const state = { sort: params.get("sort") || "", dir: params.get("dir") || "asc" };
  const go = (changes) => (location.hash = route(["trajectories"], { ...query, ...state, ...changes }));
  const selects = FILTERS.map(([key, label]) => h("select", { "aria-label": label, onchange: (e) => go({ [key]: e.target.value }) },
    h("option", { value: "" }, `${label}: all`),
    found.facets[key].map((v) => h("option", { value: v, selected: v === query[key] }, v))));
  const text = h("input", { type: "search", value: query.q, placeholder: "Trajectory id contains…  ( / ), Enter", "aria-label": "Filter by id", "data-filter": "",
    onkeydown: (e) => e.key === "Enter" && go({ q: e.target.value }) });
  const task = h("input", { type: "search", value: query.task, placeholder: "Exact task id, Enter", "aria-label": "Task id",
    onkeydown: (e) => e.key === "Enter" && go({ task: e.target.value }) });
  const holder = h("div");
  const draw = () => holder.replaceChildren(sortableTable({
    columns: COLUMNS, rows: found.trajectories, state,
    onSort: (key, dir) => { Object.assign(state, { sort: key, dir }); history.replaceState(null, "", route(["trajectories"], { ...query, ...state })); draw(); },
    onRow: (r) => (location.hash = route(["trajectories", r.digest])),
  }));
  draw();
  const shown = found.total > found.trajectories.length ? `first ${count(found.trajectories.length)} of ${count(found.total)}` : count(found.total);
  const node = h("section", { class: "page" }, h("h1", {}, "Trajectories"),
    h("div", { class: "controls" }, text, task, selects, h("span", { class: "muted" }, `${shown} trajectories`)), holder);
  return { node, title: "Trajectories" };
}
