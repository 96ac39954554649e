// The viewer's entry: hash routes → pages. Each page builds its view off-screen and returns it;
// only the newest navigation's view is shown.

import { get } from "./api.js";
import { errorBox, h, shown } from "./dom.js";
import { runPage } from "./run.js";
import { runsPage } from "./runs.js";
import { trajectoriesPage } from "./trajectories.js";
import { trajectoryPage } from "./trajectory.js";

const main = document.getElementById("main");
let generation = 0;
let pageKeys = null;

export function parseHash(hash) {
  const raw = hash.replace(/^#\/?/, "");
  const at = raw.indexOf("?");
  const path = at < 0 ? raw : raw.slice(0, at);
  const params = new URLSearchParams(at < 0 ? "" : raw.slice(at + 1));
  const parts = path.split("/").filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  return { parts, params };
}

function pick(parts) {
  const [first, id] = parts;
  if (!first || first === "runs") return id ? runPage : runsPage;
  if (first === "trajectories") return id ? trajectoryPage : trajectoriesPage;
  return null;
}

async function render() {
  const mine = ++generation;
  const { parts, params } = parseHash(location.hash);
  const page = pick(parts);
  const slow = setTimeout(() => mine === generation && main.replaceChildren(h("p", { class: "muted" }, "Loading…")), 150);
  let view;
  try {
    if (!page) throw new Error(`no page ${location.hash}`);
    view = await page({ parts, params, current: () => mine === generation });
  } catch (error) {
    view = { node: errorBox(error.message), title: "Error" };
  }
  clearTimeout(slow);
  if (mine !== generation) return;
  main.replaceChildren(view.node);
  pageKeys = view.onKey || null;
  document.title = view.title ? `${view.title} · AgentLens` : "AgentLens viewer";
  for (const a of document.querySelectorAll("[data-nav]")) {
    const section = params.has("run") ? "runs" : parts[0] || "runs";
    a.toggleAttribute("aria-current", a.dataset.nav === section);
  }
  window.scrollTo(0, 0);
  main.focus({ preventScroll: true });
}

function typing(target) {
  return target.closest("input, textarea, select, [contenteditable]");
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "Escape" && typing(event.target)) return event.target.blur();
  if (typing(event.target)) return;
  if (event.key === "/") {
    const filter = main.querySelector("[data-filter]");
    if (filter) {
      event.preventDefault();
      filter.focus();
      filter.select();
    }
  } else if (event.key === "g") {
    location.hash = "#/runs";
  } else if (pageKeys) {
    pageKeys(event);
  }
}

async function showStore() {
  try {
    const stats = await get("stats");
    document.getElementById("store-info").textContent =
      shown(`${stats.url} · ${stats.runs} runs · ${stats.trajectories} trajectories`);
  } catch {
    // The pages show their own errors; the header line is only a hint.
  }
}

window.addEventListener("hashchange", render);
document.addEventListener("keydown", onKey);
render();
showStore();
