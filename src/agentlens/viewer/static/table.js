// A table whose columns sort on click (or Enter/Space on the header button), nulls last.
// columns: [{ key, label, value(row) -> sort key, cell(row) -> Node|string, numeric, title(row) }]

import { h } from "./dom.js";

export function compare(a, b) {
  const missing = (v) => v === null || v === undefined || v === "";
  if (missing(a) || missing(b)) return missing(a) - missing(b);
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true });
}

export function sortRows(rows, column, dir) {
  if (!column) return rows;
  const sign = dir === "desc" ? -1 : 1;
  return rows
    .map((row, i) => ({ row, i, key: column.value(row) }))
    .sort((x, y) => {
      const empty = (v) => v === null || v === undefined || v === "";
      if (empty(x.key) !== empty(y.key)) return empty(x.key) ? 1 : -1;
      return sign * compare(x.key, y.key) || x.i - y.i;
    })
    .map((x) => x.row);
}

// state: { sort, dir }; onSort(key, dir) is called with the new order; onRow(row) on a row click.
// presorted: the rows come in state's order already (sorted by the server over all records).
export function sortableTable({ columns, rows, state, onSort, onRow, caption, presorted = false }) {
  const column = columns.find((c) => c.key === state.sort);
  const sorted = presorted ? rows : sortRows(rows, column, state.dir);
  const head = h("tr", {}, columns.map((c) => headerCell(c, state, onSort)));
  const body = h("tbody", {}, sorted.map((row) => bodyRow(row, columns, onRow)));
  return h(
    "div",
    { class: "table-wrap" },
    h("table", { class: "data" }, caption ? h("caption", {}, caption) : null, h("thead", {}, head), body),
  );
}

function headerCell(column, state, onSort) {
  const active = column.key === state.sort;
  const dir = active ? state.dir : null;
  const next = active && dir === "asc" ? "desc" : active && dir === "desc" ? "asc" : column.numeric ? "desc" : "asc";
  const arrow = dir === "asc" ? " ▲" : dir === "desc" ? " ▼" : "";
  const button = h(
    "button",
    { type: "button", class: "sort", "data-sort": column.key, title: `Sort by ${column.label}`, onclick: () => onSort(column.key, next) },
    column.label,
    h("span", { class: "arrow", "aria-hidden": "true" }, arrow),
  );
  const sort = dir === "asc" ? "ascending" : dir === "desc" ? "descending" : "none";
  return h("th", { scope: "col", class: column.numeric ? "num" : null, "aria-sort": sort }, button);
}

function bodyRow(row, columns, onRow) {
  const tr = h(
    "tr",
    { class: onRow ? "clickable" : null },
    columns.map((c) => h("td", { class: c.numeric ? "num" : null, title: c.title ? c.title(row) : null }, c.cell(row))),
  );
  if (onRow) {
    tr.addEventListener("click", (event) => {
      if (event.target.closest("a, button, input, select")) return;
      onRow(row);
    });
  }
  return tr;
}
