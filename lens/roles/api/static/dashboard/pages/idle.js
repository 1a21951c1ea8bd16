// Idle GPUs: held by a pod but unused, now or over a range, and the idle GPU-hours of each
// namespace.
import { get, now, pageSize } from "../api.js";
import { asOf, filter, figure, h, link, pager, section, table, urlSort, workloadLink } from "../dom.js";
import * as format from "../format.js";
import * as view from "../view.js";

export const TITLE = "Idle GPUs";
const WANTED = 50; // rows a page
const RANGES = { now: 0, "24h": 86400, "7d": 7 * 86400 };

// What an empty list of GPUs idle now means: a true "none", or that nobody could tell yet.
function nothingIdleNow(idle, sources) {
  if (idle.measured.as_of === null) return "Idle GPUs are not computed yet: the jobs' idle-GPU run has not run (lens jobs).";
  if (sources && sources.agents.as_of === null) return "No readings yet: no node agent has reported a GPU, so no GPU can be called idle or working.";
  if (sources && sources.controller.as_of === null) return "No GPU is known to be held: no controller has watched this cluster's pods.";
  return "No idle GPUs now: every GPU held by a pod did work in the last minutes read.";
}

export async function render({ params, sources }) {
  const sort = urlSort(params, "minutes", true);
  const page = view.integer(params, "page", 1, 1);
  const size = pageSize(WANTED);
  const over = view.choice(params, "over", RANGES, "now");
  const end = now();
  const range = over === "now" ? {} : { start: end - RANGES[over], end };
  const idle = await get("/v1/idle", {
    ...range,
    namespace: params.get("namespace"),
    node: params.get("node"),
    order_by: sort.key,
    desc: sort.desc,
    page_num: page,
    page_size: size,
  });
  const columns = [
    { label: "node", sort: "node", cell: (g) => link(g.node, view.href(["nodes", g.node])) },
    { label: "GPU", numeric: true, cell: (g) => (g.gpu_id === null ? "—" : String(g.gpu_id)) },
    { label: "model", cell: (g) => g.gpu_model ?? "—" },
    { label: "namespace", sort: "namespace", cell: (g) => g.namespace },
    { label: "pod", cell: (g) => g.pod_name },
    { label: "workload", cell: (g) => (g.workload ? workloadLink(g.workload.name, g.workload.uid, g.workload.kind) : "—") },
    { label: "idle since", sort: "since", cell: (g) => format.when(g.since) },
    // Over a range, the minutes inside it (an interval may have begun before); now, all of them.
    over === "now"
      ? { label: "idle for", sort: "minutes", numeric: true, cell: (g) => format.duration(g.minutes * 60) }
      : { label: "idle in range", numeric: true, cell: (g) => format.duration(g.minutes_in_range * 60) },
    { label: "utilization", numeric: true, cell: (g) => format.percent(g.utilization_percent) },
  ];
  const namespaces = table(
    [
      { label: "namespace", cell: (n) => n.namespace },
      { label: over === "now" ? "idle GPUs" : "idle intervals", numeric: true, cell: (n) => format.number(n.intervals) },
      { label: "idle GPU-hours", numeric: true, cell: (n) => figure(`idle-hours-${n.namespace}`, n.idle_gpu_hours, format.hours(n.idle_gpu_hours, 2)) },
    ],
    idle.namespaces,
    { name: "idle-namespaces", emptyText: "No namespace has idle GPUs." },
  );
  const filtered = params.has("namespace") || params.has("node");
  return h(
    "div",
    null,
    h(
      "h1",
      null,
      over === "now" ? "Idle GPUs " : "Idle intervals ",
      figure("idleGpus", idle.total, `(${format.number(idle.total)})`),
    ),
    h(
      "div",
      { class: "toolbar" },
      filter(params, "over", "when", [
        ["", "now"],
        ["24h", "last 24 h"],
        ["7d", "last 7 days"],
      ]),
      filter(params, "namespace", "namespace"),
      filter(params, "node", "node"),
      h("span", { class: "quiet" }, "intervals ", asOf(idle.measured, { name: "idle", missing: "not computed yet" })),
    ),
    table(columns, idle.data, {
      sort,
      name: "idle",
      emptyText: filtered ? "No idle GPU matches these filters." : over === "now" ? nothingIdleNow(idle, sources) : "No GPU was idle in this range.",
    }),
    idle.total > size ? pager(page, size, idle.total) : null,
    section("By namespace", namespaces),
  );
}
