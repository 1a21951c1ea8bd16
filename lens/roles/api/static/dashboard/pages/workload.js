// One workload: what it is, its pods, its tree of owned workloads, and its GPUs' utilization,
// memory and power, and its training figures once its logs arrive.
import { ApiError, get } from "../api.js";
import { rangePicker, rangeQuery, rangeSeconds, timeChart } from "../chart.js";
import { badge, empty, facts, h, link, section, table } from "../dom.js";
import * as format from "../format.js";
import * as view from "../view.js";
import { heldHours } from "./workloads.js";

export const TITLE = "Workload";
const NODE_LABEL = "primus_lens_node_name";
const CHARTS = [
  ["GPU Utilization", (v, d) => format.percent(v, d), [0, 100]],
  ["GPU Memory Utilization", (v, d) => format.percent(v, d), [0, 100]],
  ["GPU Power", (v) => format.watts(v), null],
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
    if (!byMetric.has(point.metric)) byMetric.set(point.metric, []);
    byMetric.get(point.metric).push({ timestamp: point.timestamp / 1000, value: point.value });
  }
  const series = [...byMetric.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([label, values]) => ({ label, points: values }));
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
  const charts = CHARTS.map(([title, write, yRange]) =>
    timeChart(title, seriesOf(metrics[title]), { format: write, range: yRange, name: title }),
  );
  const training = logged.series;
  return h(
    "div",
    null,
    h("h1", null, `${detail.name} `, badge(detail.endTime === null ? "Running" : "ended", detail.endTime === null ? "good" : "muted")),
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
        : training.length
        ? h(
            "div",
            { class: "charts" },
            training.map((one) => timeChart(one.label, [one], { format: (v, d = 2) => format.number(v, d), range: null, name: `training-${one.label}` })),
          )
        : empty("No training figures yet: they appear once this workload's training logs reach Lens."),
    ),
  );
}
