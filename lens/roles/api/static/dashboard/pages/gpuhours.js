// GPU-hours held and used per namespace, workload or team (a label), over whole UTC days,
// with the same rows as CSV.
import { get, getCsv, now, pageSize } from "../api.js";
import { asOf, figure, filter, h, pager, progress, table, urlSort } from "../dom.js";
import * as format from "../format.js";
import * as view from "../view.js";

export const TITLE = "GPU-hours";
const WANTED = 100; // rows a page
const DAYS = { today: 0, "7d": 6, "30d": 29 };

function isoDay(date) {
  return date.toISOString().slice(0, 10);
}

function groupText(group) {
  if (group.kind === "workload" && group.workload) return `${group.workload.namespace}/${group.workload.name} (${group.workload.kind})`;
  return group.value || "(none)";
}

function download(text, name) {
  const address = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const anchor = h("a", { href: address, download: name });
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(address), 10_000);
}

// The bar is what its label says: used GPU-hours over held ones, with the share written.
function usedOfHeld(row) {
  const share = row.used_gpu_hours / row.held_gpu_hours;
  return h("span", { class: "bar-cell", "data-used-of-held": String(share) }, progress(share), h("span", { class: "quiet", text: format.percent(100 * share, 0) }));
}

// The held GPU-hours whose utilization was known: "all" when every one was, else how many —
// used GPU-hours count only those, so a row with less known reads low for want of readings.
function knownText(row) {
  if (row.held_gpu_hours <= 0) return "—";
  if (Math.abs(row.measured_gpu_hours - row.held_gpu_hours) < 0.005) return "all";
  return `${format.hours(row.measured_gpu_hours, 2)} of ${format.hours(row.held_gpu_hours, 2)}`;
}

export async function render({ params }) {
  const sort = urlSort(params, "held_gpu_hours", true);
  const page = view.integer(params, "page", 1, 1);
  const size = pageSize(WANTED);
  const span = view.choice(params, "days", DAYS, "7d");
  const groupBy = params.get("group_by") || "namespace";
  const today = new Date(now() * 1000);
  const first = new Date(today.getTime() - DAYS[span] * 86400 * 1000);
  const query = { start: isoDay(first), end: isoDay(today), group_by: groupBy };
  const [about, hours] = await Promise.all([
    get("/v1/about"),
    get("/v1/gpuHours", { ...query, order_by: sort.key, desc: sort.desc, page_num: page, page_size: size }),
  ]);
  const columns = [
    { label: groupBy.startsWith("label:") ? groupBy.slice(6) : groupBy, sort: "group", cell: (r) => groupText(r.group) },
    { label: "GPU model", sort: "gpu_model", cell: (r) => r.gpu_model || "—" },
    { label: "held GPU-hours", sort: "held_gpu_hours", numeric: true, cell: (r) => figure("held", r.held_gpu_hours, format.hours(r.held_gpu_hours, 2)) },
    { label: "used GPU-hours", sort: "used_gpu_hours", numeric: true, cell: (r) => figure("used", r.used_gpu_hours, format.hours(r.used_gpu_hours, 2)) },
    {
      label: "used of held",
      cell: (r) => (r.held_gpu_hours > 0 ? usedOfHeld(r) : h("span", { class: "quiet", text: "—" })),
    },
    {
      label: "utilization known",
      numeric: true,
      cell: (r) => figure("measured", r.measured_gpu_hours, knownText(r)),
    },
  ];
  const problem = h("span", { class: "error-text", "data-export-error": "" });
  const exportCsv = h("button", {
    type: "button",
    "data-export": "csv",
    onclick: async () => {
      problem.textContent = "";
      try {
        // Every row, in the table's order (the CSV has no pages).
        const csv = await getCsv("/v1/gpuHours", { ...query, order_by: sort.key, desc: sort.desc });
        download(csv, `gpu-hours-${query.start}-${query.end}.csv`);
      } catch (error) {
        problem.textContent = `export failed: ${error.message}`;
      }
    },
    text: "Export CSV",
  });
  const groupChoices = [
    ["namespace", "namespace"],
    ["workload", "workload"],
    ...about.gpu_hours_labels.map((key) => [`label:${key}`, key === about.team_label ? `team (${key})` : `label ${key}`]),
  ];
  return h(
    "div",
    null,
    h("h1", { text: "GPU-hours" }),
    h(
      "div",
      { class: "toolbar" },
      filter(params, "group_by", "by", groupChoices),
      filter(
        params,
        "days",
        "days",
        [
          ["today", "today (UTC)"],
          ["7d", "last 7 days"],
          ["30d", "last 30 days"],
        ],
        "7d",
      ),
      h("span", { class: "quiet" }, `${hours.start} to ${hours.end}, UTC days · summed `, asOf(hours.measured, { name: "gpu-hours", missing: "never yet" })),
      exportCsv,
      problem,
    ),
    table(columns, hours.data, { sort, name: "gpu-hours", emptyText: "No GPU-hours in these days yet: they are summed as GPU pods run." }),
    hours.total > size ? pager(page, size, hours.total) : null,
  );
}
