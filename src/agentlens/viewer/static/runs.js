// #/runs: every stored run, newest first.

import { get } from "./api.js";
import { badge, h, incompleteBadge, link, route } from "./dom.js";
import { count, dateTime, shortId } from "./format.js";
import { sortableTable } from "./table.js";

const COLUMNS = [
  { key: "id", label: "Run", value: (r) => r.id, cell: (r) => link(route(["runs", r.id]), shortId(r.id), { class: "mono" }) },
  { key: "kind", label: "Kind", value: (r) => r.kind, cell: (r) => badge(r.kind, `kind-${r.kind}`) },
  { key: "scorer", label: "Scorer", value: (r) => r.scorer, cell: (r) => r.scorer },
  { key: "label", label: "Label", value: (r) => r.label, cell: (r) => r.label || "" },
  { key: "created", label: "Created", value: (r) => r.created, cell: (r) => dateTime(r.created), title: (r) => r.created },
  { key: "n_records", label: "Records", numeric: true, value: (r) => r.n_records, cell: (r) => r.complete ? count(r.n_records) : [count(r.n_records), " ", incompleteBadge()] },
];

export async function runsPage() {
  const { runs } = await get("runs");
  const node = h("section", { class: "page" }, h("h1", {}, "Runs"));
  if (!runs.length) {
    node.append(
      h("p", { class: "empty" }, "No runs in this store yet. Add some with ", h("code", {}, "agentlens store import PATHS"),
        " or ", h("code", {}, "agentlens score … --store DB"), "."),
    );
    return { node, title: "Runs" };
  }
  const state = { sort: "created", dir: "desc" };
  const holder = h("div");
  const draw = () => holder.replaceChildren(
    sortableTable({
      columns: COLUMNS,
      rows: runs,
      state,
      onSort: (key, dir) => Object.assign(state, { sort: key, dir }) && draw(),
      onRow: (r) => (location.hash = route(["runs", r.id])),
    }),
  );
  draw();
  node.append(h("p", { class: "muted" }, `${runs.length} runs`), holder);
  return { node, title: "Runs" };
}
