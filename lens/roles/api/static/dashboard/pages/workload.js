// One workload: what it is, its pods, its tree of owned workloads, and its GPUs' utilization,
// memory and power, and its training figures once its logs arrive.
import { ApiError, get } from "../api.js";
import { rangePicker, rangeQuery, rangeSeconds, timeChart } from "../chart.js";
import { empty, facts, h, link, section, table } from "../dom.js";
import * as format from "../format.js";
import { statusBadge } from "../status.js";
import * as training from "../training.js";
import * as view from "../view.js";
import { heldHours } from "./workloads.js";

export const TITLE = "Workload";
const NODE_LABEL = "primus_lens_node_name";
// The API's chart (its original name) and how it reads here: title, values, y range.
const CHARTS = [
  ["GPU Utilization", "GPU utilization (%)", (v, d) => format.percent(v, d), [0, 100]],
  ["GPU Memory Utilization", "VRAM used (%)", (v, d) => format.percent(v, d), [0, 100]],
  ["GPU Power", "GPU power (W)", (v) => format.watts(v), null],
];

function tree(node) {
  return h(
    "li",
    null,
    h("span", { class: "quiet", text: `${node.kind} ` }),
    link(node.name, view.href(["workloads", node.uid])),
    node.children.length ? h("ul", null, node.children.map(tree)) : null,
  );
}

// Every figure the workload's training logs gave in the range (TFLOP/s, loss, iteration time,
// ...), one series each: each chart has a scale of its own. A range holding more iterations
// than one answer carries says so instead of failing the page.
async function trainingFigures(path, range) {
  let points;
  try {
    points = await get(`${path}/trainingPerformance`, { start: range.start * 1000, end: range.end * 1000 });
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return { series: [], problem: `training figures: ${error.message}` };
    throw error;
  }
  const byMetric = new Map();
  for (const point of points) {
    if (!byMetric.has(point.metric)) byMetric.set(point.metric, { shown: training.describe(point.metric), points: [] });
    const one = byMetric.get(point.metric);
    one.points.push({ timestamp: point.timestamp / 1000, value: point.value * one.shown.scale });
  }
  const series = [...byMetric.entries()]
    .map(([metric, { shown, points: values }]) => ({ metric, shown, label: shown.title, points: values }))
    .sort((a, b) => a.shown.order - b.shown.order || (a.metric < b.metric ? -1 : 1));
  return { series, problem: "" };
}

function seriesOf(graph) {
  return graph.series.map((one) => ({
    label: one.labels[NODE_LABEL] || Object.values(one.labels).join(" ") || "value",
    points: one.values,
  }));
}

export async function render({ parts, params, update }) {
  const uid = parts[1];
  const path = `/v1/workloads/${encodeURIComponent(uid)}`;
  let detail;
  try {
    detail = await get(path);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      return h("div", null, h("h1", { text: "Workload" }), empty(`No workload with uid ${uid}.`));
    }
    throw error;
  }
  // The range ends when the workload did (or now), and starts no earlier than it did.
  const range = rangeQuery(params);
  if (detail.endTime !== null && detail.endTime < range.end) {
    range.end = detail.endTime + range.step;
    range.start = range.end - rangeSeconds(params);
  }
  range.start = Math.max(range.start, Math.min(detail.startTime, range.end - range.step));
  const [hierarchy, metrics, logged] = await Promise.all([
    get(`${path}/hierarchy`),
    get(`${path}/metrics`, range),
    trainingFigures(path, range),
  ]);
  const span = { start: range.start, end: range.end };
  const charts = CHARTS.map(([name, title, write, yRange]) =>
    timeChart(title, seriesOf(metrics[name]), { format: write, range: yRange, name, span }),
  );
  const trained = logged.series;
  return h(
    "div",
    null,
    h("h1", null, `${detail.name} `, statusBadge(detail.status, detail.status_reason)),
    h(
      "div",
      { class: "panel" },
      facts([
        ["kind", `${detail.kind} (${detail.apiVersion})`],
        ["namespace", detail.namespace],
        ["uid", detail.uid],
        ["started", format.when(detail.startTime)],
        ["ended", format.when(detail.endTime)],
        ["GPU-hours held", format.hours(heldHours(detail.gpu_allocation), 2)],
      ]),
    ),
    section("Owned workloads", h("div", { class: "panel tree" }, h("ul", null, tree(hierarchy)))),
    section(
      "Pods",
      table(
        [
          { label: "pod", cell: (p) => `${p.podNamespace}/${p.podName}` },
          { label: "node", cell: (p) => link(p.nodeName, view.href(["nodes", p.nodeName])) },
        ],
        detail.pods,
        { name: "pods", emptyText: "No GPU pods yet." },
      ),
    ),
    section("GPUs", h("div", { class: "toolbar" }, rangePicker(params, update)), h("div", { class: "charts" }, charts)),
    section(
      "Training",
      logged.problem
        ? h("div", { class: "error", "data-error": "", text: logged.problem })
        : trained.length
        ? h(
            "div",
            { class: "charts" },
            trained.map((one) => timeChart(one.shown.title, [one], { format: one.shown.write, range: null, name: `training-${one.metric}`, span })),
          )
        : empty("No training figures yet: they appear once this workload's training logs reach Lens."),
    ),
  );
}
