// #/trajectories: every stored trajectory, filtered by task, model, outcome and format. The
// server sorts, filters and pages over all of them; the page loads 500 at a time.

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

const PAGE = 500;

export async function trajectoriesPage({ params }) {
  const query = Object.fromEntries(["task", "q", ...FILTERS.map(([k]) => k)].map((k) => [k, params.get(k) || ""]));
  const state = { sort: params.get("sort") || "", dir: params.get("dir") || "asc" };
  const ask = (offset) => get("trajectories", { ...query, ...state, limit: PAGE, offset });
  let found = await ask(0).catch((error) => {
    if (error.status !== 400 || !state.sort) throw error;
    Object.assign(state, { sort: "", dir: "asc" }); // a bookmark's sort this version lacks
    return ask(0);
  });
  let rows = [...found.trajectories];
  let asked = 0; // answers to older questions are dropped when they arrive late
  const go = (changes) => (location.hash = route(["trajectories"], { ...query, ...state, ...changes }));
  const selects = FILTERS.map(([key, label]) => h("select", { "aria-label": label, onchange: (e) => go({ [key]: e.target.value }) },
    h("option", { value: "" }, `${label}: all`),
    found.facets[key].map((v) => h("option", { value: v, selected: v === query[key] }, v))));
  const text = h("input", { type: "search", value: query.q, placeholder: "Trajectory id contains…  ( / ), Enter", "aria-label": "Filter by id", "data-filter": "",
    onkeydown: (e) => e.key === "Enter" && go({ q: e.target.value }) });
  const task = h("input", { type: "search", value: query.task, placeholder: "Exact task id, Enter", "aria-label": "Task id",
    onkeydown: (e) => e.key === "Enter" && go({ task: e.target.value }) });
  const shown = h("span", { class: "muted", "aria-live": "polite", "data-shown": "" });
  const holder = h("div");
  const more = h("button", { type: "button", class: "more" });
  const draw = () => {
    shown.textContent = rows.length < found.total ? `${count(rows.length)} of ${count(found.total)} trajectories shown` : `${count(found.total)} trajectories`;
    more.hidden = rows.length >= found.total;
    more.textContent = `Load ${count(Math.min(PAGE, found.total - rows.length))} more`;
    holder.replaceChildren(sortableTable({
      columns: COLUMNS, rows, state, presorted: true,
      onSort: (key, dir) => { Object.assign(state, { sort: key, dir }); refresh(); },
      onRow: (r) => (location.hash = route(["trajectories", r.digest])),
    }));
  };
  const refresh = async () => {
    history.replaceState(null, "", route(["trajectories"], { ...query, ...state }));
    const mine = ++asked;
    const next = await ask(0);
    if (mine !== asked) return;
    found = next;
    rows = [...next.trajectories];
    draw();
  };
  more.addEventListener("click", async () => {
    const mine = asked;
    const next = await ask(rows.length);
    if (mine !== asked) return;
    rows.push(...next.trajectories);
    draw();
  });
  draw();
  const node = h("section", { class: "page" }, h("h1", {}, "Trajectories"),
    h("div", { class: "controls" }, text, task, selects, shown), holder, more);
  return { node, title: "Trajectories" };
}
