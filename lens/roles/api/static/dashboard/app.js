// The dashboard's shell: which page the URL names, the theme, auto-refresh, what feeds the
// figures (a banner when a source is missing or late), and drawing a page's answer in place of
// the last one. body[data-state] says loading, ready or error; while a page loads, the old one
// stays dimmed under a "loading" note and the tabs still mark it.
import { ApiError, get, limits, setClock, setToken } from "./api.js";
import { h } from "./dom.js";
import * as format from "./format.js";
import * as sourcesBanner from "./sources.js";
import * as view from "./view.js";
import * as gpuHours from "./pages/gpuhours.js";
import * as idle from "./pages/idle.js";
import * as node from "./pages/node.js";
import * as nodes from "./pages/nodes.js";
import * as overview from "./pages/overview.js";
import * as workload from "./pages/workload.js";
import * as workloads from "./pages/workloads.js";

const THEME_KEY = "lens.theme";
const main = document.getElementById("main");
const tooltip = document.getElementById("tooltip");
const refreshChoice = document.getElementById("refresh");
const freshness = document.getElementById("freshness");
const loading = document.getElementById("loading");
const banner = document.getElementById("sources");
let timer = null;
let sources = null; // /v1/about's sources, read again with every page drawn
let shown = 0; // the latest show(): an older one finishing late draws nothing
const charts = []; // the page's uPlot charts, destroyed with it

function route(parts) {
  const [first, second] = parts;
  if (!first) return ["overview", overview];
  if (first === "nodes") return second ? ["nodes", node] : ["nodes", nodes];
  if (first === "workloads") return second ? ["workloads", workload] : ["workloads", workloads];
  if (first === "idle") return ["idle", idle];
  if (first === "gpu-hours") return ["gpu-hours", gpuHours];
  return ["", null];
}

function tokenForm() {
  const input = h("input", { type: "password", placeholder: "bearer token", "aria-label": "token" });
  const save = (event) => {
    event.preventDefault();
    setToken(input.value.trim());
    show();
  };
  return h(
    "form",
    { class: "panel", onsubmit: save },
    h("p", { text: "This API asks for a bearer token. It is kept in this tab only." }),
    input,
    " ",
    h("button", { type: "submit", text: "Use token" }),
  );
}

// What failed, in words: the request, the API's answer, and a way to try again.
function failure(error) {
  if (error instanceof ApiError && error.status === 401) return tokenForm();
  let text;
  if (error instanceof ApiError) text = `The API answered ${error.status} to ${error.path}: ${error.message}`;
  else if (error instanceof TypeError) text = `The API could not be reached (${error.message}): is lens api running?`;
  else text = `The page could not be drawn: ${error}`;
  return h(
    "div",
    { class: "error", "data-error": "" },
    h("p", { text }),
    h("button", { type: "button", onclick: () => show(), text: "Try again" }),
  );
}

function scheduleRefresh(params) {
  clearTimeout(timer);
  const seconds = view.integer(params, "refresh", 30);
  if (![...refreshChoice.options].some((option) => option.value === String(seconds))) {
    refreshChoice.append(h("option", { value: String(seconds), text: `${seconds} s` }));
  }
  refreshChoice.value = String(seconds);
  if (seconds > 0) timer = setTimeout(refresh, seconds * 1000);
}

// A refresh waits while someone types in a filter (it would redraw the box under them). Like
// every show() it learns the API's clock again first: `lens demo` slows its cluster's clock
// while the host cannot keep up, and the header says how fast it lives now.
function refresh() {
  if (document.activeElement?.matches("input")) scheduleRefresh(view.current().params);
  else show(true);
}

function markTabs(name) {
  for (const anchor of document.querySelectorAll("#nav a")) {
    anchor.classList.toggle("active", anchor.dataset.page === name);
    anchor.href = view.href(anchor.dataset.page === "overview" ? [] : [anchor.dataset.page]);
  }
}

async function show(refreshing = false) {
  const mine = ++shown;
  const { parts, params } = view.current();
  const [name, page] = route(parts);
  if (!refreshing) {
    document.body.dataset.state = "loading";
    loading.textContent = `loading ${page ? page.TITLE : "page"}…`;
    loading.hidden = false;
    main.classList.add("busy");
    main.setAttribute("aria-busy", "true");
  }
  // The width a page's content has: main's, less its padding (main.clientWidth includes it).
  const context = { parts, params, width: main.clientWidth - 40, tooltip, update: view.update };
  let drawn;
  let state = "ready";
  try {
    await learn();
    context.sources = sources;
    drawn = page ? await page.render(context) : h("div", { class: "empty", "data-empty": "", text: "No such page." });
  } catch (error) {
    drawn = failure(error);
    state = "error";
  }
  if (mine !== shown) return; // a later show() draws its own page
  loading.hidden = true;
  main.classList.remove("busy");
  main.removeAttribute("aria-busy");
  if (refreshing && state === "error" && document.body.dataset.state === "ready") {
    // A refresh that fails (the API restarting, say) keeps the page drawn and says so; the
    // next period tries again.
    const why = drawn.querySelector("p") || drawn;
    freshness.textContent = `refresh failed ${clockTime()}: ${why.textContent}`;
    freshness.className = "error-text";
    scheduleRefresh(params);
    return;
  }
  freshness.textContent = state === "ready" ? `updated ${clockTime()}` : "";
  freshness.className = "quiet";
  const scroll = globalThis.scrollY;
  for (const chart of charts.splice(0)) chart.destroy(); // uPlot keeps window listeners
  tooltip.hidden = true; // its canvas is going
  markTabs(name);
  sourcesBanner.show(banner, sources);
  main.replaceChildren(drawn);
  for (const panel of main.querySelectorAll("[data-chart]")) {
    if (panel.draw) charts.push(panel.draw());
  }
  document.body.dataset.state = state;
  document.body.dataset.drawn = location.hash || "#/"; // which view is drawn, for the tests
  performance.mark("lens:drawn"); // what the dashboard benchmark times (bench/bench_dashboard.py)
  if (refreshing) globalThis.scrollTo(0, scroll);
  document.title = page ? `Lens · ${page.TITLE}` : "Lens";
  scheduleRefresh(params);
}

function clockTime() {
  return new Date().toLocaleTimeString("en-GB", { hour12: false });
}

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
}

function startTheme() {
  const asked = view.current().params.get("theme");
  const saved = localStorage.getItem(THEME_KEY);
  const dark = globalThis.matchMedia("(prefers-color-scheme: dark)").matches;
  applyTheme(asked || saved || (dark ? "dark" : "light"));
  document.getElementById("theme").addEventListener("click", () => {
    const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
    localStorage.setItem(THEME_KEY, next);
    const { params } = view.current();
    if (params.has("theme")) view.update({ theme: next });
    else {
      applyTheme(next);
      show(true);
    }
  });
}

refreshChoice.addEventListener("change", () => view.update({ refresh: refreshChoice.value }));
globalThis.addEventListener("hashchange", () => {
  const asked = view.current().params.get("theme");
  if (asked) applyTheme(asked);
  show();
});
// What the API tells of itself: its largest page, its clock, whether the cluster is simulated
// (`lens demo`, marked in the header with how fast it lives) and what feeds its figures.
async function learn() {
  try {
    const about = await get("/v1/about");
    limits.pageSize = about.max_page_size;
    setClock(about.now, about.clock_rate);
    sources = about.sources;
    const badge = document.getElementById("simulated");
    badge.hidden = !about.simulated;
    const rate = Number(about.clock_rate.toFixed(1));
    badge.textContent = rate === 1 ? "simulated cluster" : `simulated cluster · ${rate}× real time`;
  } catch {
    // a page's own request shows what is wrong (a token, say)
  }
}

startTheme();
document.getElementById("zone").textContent = `Times are ${format.zoneName()}, on a 24-hour clock.`;
show();
