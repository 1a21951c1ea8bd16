// One node: its facts, its GPUs now (figures and holders), their history, its workloads now
// and before, and its device changelog.
import { ApiError, get, getAll, pageSize } from "../api.js";
import { rangePicker, rangeQuery, timeChart } from "../chart.js";
import { badge, empty, facts, figure, h, section, table, workloadLink } from "../dom.js";
import * as format from "../format.js";

export const TITLE = "Node";

function gpuTable(gpus) {
  return table(
    [
      { label: "GPU", numeric: true, cell: (g) => String(g.gpu_id) },
      { label: "model", cell: (g) => g.model },
      { label: "utilization", numeric: true, cell: (g) => figure(`gpu-${g.gpu_id}-utilization`, g.utilization_percent, format.percent(g.utilization_percent)) },
      { label: "VRAM used", numeric: true, cell: (g) => format.bytes(g.memory_used_bytes) },
      { label: "VRAM", numeric: true, cell: (g) => format.bytes(g.memory_total_bytes) },
      { label: "power", numeric: true, cell: (g) => format.watts(g.power_watts) },
      { label: "temperature", numeric: true, cell: (g) => format.celsius(g.temperature_celsius) },
      {
        label: "held by",
        cell: (g) =>
          g.holder
            ? h("span", null, `${g.holder.namespace}/${g.holder.pod_name}`, g.holder.workload ? " · " : "", g.holder.workload ? workloadLink(g.holder.workload.name, g.holder.workload.uid, g.holder.workload.kind) : "")
            : h("span", { class: "quiet", text: "free" }),
      },
      { label: "uuid", cell: (g) => h("span", { class: "quiet", text: g.uuid }) },
    ],
    gpus.data,
    { name: "gpus", emptyText: "No GPUs reported by this node's agent yet." },
  );
}

function perGpuSeries(graph, fallback) {
  return graph.series.map((one) => ({ label: one.labels.gpu_id === undefined ? fallback : `GPU ${one.labels.gpu_id}`, points: one.values }));
}

export async function render({ parts, params, update }) {
  const name = parts[1];
  const range = rangeQuery(params);
  let detail;
  try {
    detail = await get(`/v1/nodes/${encodeURIComponent(name)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      return h("div", null, h("h1", { text: name }), empty(`No GPU node named ${name} in this cluster.`));
    }
    throw error;
  }
  const path = `/v1/nodes/${encodeURIComponent(name)}`;
  const [gpus, metrics, now, before, changes] = await Promise.all([
    getAll("/v1/gpus", { node: name, order_by: "node", desc: false }),
    get(`${path}/gpuMetrics`, range),
    get(`${path}/workloads`, { page_size: pageSize(100) }),
    get(`${path}/workloadsHistory`, { page_size: pageSize(20) }),
    get(`${path}/changelog`, { page_size: pageSize(20) }),
  ]);
  return h(
    "div",
    null,
    h("h1", null, `${detail.name} `, badge(detail.health, detail.health === "Ready" ? "good" : "bad")),
    h(
      "div",
      { class: "panel" },
      facts([
        ["CPU", detail.cpu],
        ["memory", detail.memory],
        ["OS", detail.os],
        ["GPU driver", detail.gpu_driver_version],
        ["kubelet", detail.kubelet_version],
        ["containerd", detail.containerd_version],
        ["GPUs", detail.static_gpu_details],
      ]),
    ),
    section("GPUs now", gpuTable(gpus)),
    section(
      "History",
      h("div", { class: "toolbar" }, rangePicker(params, update)),
      h(
        "div",
        { class: "charts" },
        timeChart("GPU utilization", perGpuSeries(metrics.gpu_utilization, "utilization"), { format: (v, d) => format.percent(v, d), range: [0, 100], name: "gpu-utilization" }),
        timeChart("GPU allocation", perGpuSeries(metrics.gpu_allocation_rate, "allocation"), { format: (v, d) => format.percent(v, d), range: [0, 100], name: "gpu-allocation" }),
      ),
    ),
    section(
      "Workloads now",
      table(
        [
          { label: "workload", cell: (w) => workloadLink(w.name, w.uid, w.kind) },
          { label: "kind", cell: (w) => w.kind },
          { label: "namespace", cell: (w) => w.namespace },
          { label: "GPUs here", numeric: true, cell: (w) => format.number(w.gpu_allocated_node) },
          { label: "GPUs in all", numeric: true, cell: (w) => format.number(w.gpu_allocated) },
          { label: "status", cell: (w) => w.status },
        ],
        now.data,
        { name: "workloads-now", emptyText: "No GPU pods on this node now." },
      ),
    ),
    section(
      "Workloads before",
      table(
        [
          { label: "pod", cell: (w) => `${w.pod_namespace}/${w.pod_name}` },
          { label: "workload", cell: (w) => workloadLink(w.name, w.uid, w.kind) },
          { label: "GPUs", numeric: true, cell: (w) => format.number(w.gpu_allocated) },
          { label: "started", cell: (w) => format.when(w.start_time) },
          { label: "ended", cell: (w) => format.when(w.end_time) },
        ],
        before.data,
        { name: "workloads-before", emptyText: "No GPU pod has finished on this node yet." },
      ),
    ),
    section(
      "Device changelog",
      table(
        [
          { label: "when", cell: (c) => format.when(c.created_at) },
          { label: "device", cell: (c) => `${c.device_type} ${c.device_name}` },
          { label: "change", cell: (c) => c.op },
          { label: "what", cell: (c) => c.changes },
        ],
        changes.data,
        { name: "changelog", emptyText: "No device has appeared, changed or left yet." },
      ),
    ),
  );
}
