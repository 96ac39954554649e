// Number and time formatting shared by the pages.

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export function count(n) {
  return n === null || n === undefined ? "" : integer.format(n);
}

export function number(value, name = "") {
  if (value === null || value === undefined) return "";
  if (Number.isInteger(value)) return integer.format(value);
  if (name === "score" || Math.abs(value) >= 10) return value.toFixed(1);
  if (name === "cost") return `$${value.toFixed(4)}`;
  return value.toFixed(3);
}

export function metricText(metric) {
  if (!metric) return "";
  const value = number(metric.value, metric.name);
  if (value && metric.label && metric.name !== "score") return `${value} ${metric.label}`;
  return value || metric.label || "–";
}

export function dateTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function duration(startIso, endIso) {
  const ms = new Date(endIso) - new Date(startIso);
  if (!Number.isFinite(ms) || ms < 0) return "";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function shortId(id) {
  return String(id || "").slice(0, 12);
}
