// One node: its facts, its GPUs now (figures and holders, as of their latest minute), their
// history, its workloads now and before, and its device changelog.
import { ApiError, get, getAll, pageSize } from "../api.js";
import { rangePicker, rangeQuery, timeChart } from "../chart.js";
import { asOf, badge, empty, facts, figure, h, section, table, workloadLink } from "../dom.js";
import * as format from "../format.js";
import { statusBadge } from "../status.js";

export const TITLE = "Node";

// The node agent's judgement of each GPU (docs/node-agent.md, GPU health), from its inventory:
// the state as a badge, its reasons beside it; "not judged" where the agent does not judge.
const HEALTH_TONES = { healthy: "good", degraded: "warn", unhealthy: "bad" };

function healthCell(health) {
  if (!health) return h("span", { class: "quiet", "data-health": "unknown", text: "not judged" });
  const [state, reasons] = health.split(": ");
  return h(
    "span",
    { "data-health": state },
    badge(state, HEALTH_TONES[state] || "muted"),
    reasons ? h("span", { class: "quiet", text: ` ${reasons.replaceAll("_", " ")}` }) : "",
  );
}

function gpuTable(gpus, healthOf) {
  return table(
    [
      { label: "GPU", numeric: true, cell: (g) => String(g.gpu_id) },
      { label: "model", cell: (g) => g.model },
      { label: "utilization", numeric: true, cell: (g) => figure(`gpu-${g.gpu_id}-utilization`, g.utilization_percent, format.percent(g.utilization_percent)) },
      { label: "VRAM used", numeric: true, cell: (g) => format.bytes(g.memory_used_bytes) },
      { label: "VRAM", numeric: true, cell: (g) => format.bytes(g.memory_total_bytes) },
      { label: "power", numeric: true, cell: (g) => format.watts(g.power_watts) },
      { label: "temperature", numeric: true, cell: (g) => format.celsius(g.temperature_celsius) },
      { label: "held by", cell: holderCell },
      { label: "health", cell: (g) => healthCell(healthOf.get(g.uuid)) },
      { label: "uuid", cell: (g) => h("span", { class: "quiet", text: g.uuid }) },
    ],
    gpus.data,
    { name: "gpus", emptyText: "No GPUs reported by this node's agent yet." },
  );
}

// Who held the GPU in its latest minute; without a minute nobody can tell, so it says so
// rather than "free" (a node's first minute, an agent that stopped).
function holderCell(g) {
  if (g.as_of === null) return h("span", { class: "quiet", "data-holder": "unknown", text: "no reading yet" });
  if (!g.holder) return h("span", { class: "quiet", "data-holder": "free", text: "free" });
  const workload = g.holder.workload;
  return h(
    "span",
    { "data-holder": "held" },
    `${g.holder.namespace}/${g.holder.pod_name}`,
    workload ? " · " : "",
    workload ? workloadLink(workload.name, workload.uid, workload.kind) : "",
  );
}

// The GPUs' figures are each of its own latest minute: as of the newest among them (the
// oldest said too, should one lag).
function gpusMeasured(gpus) {
  const known = gpus.map((g) => g.as_of).filter((t) => t !== null);
  if (known.length === 0) return { as_of: null, stale: true };
  return { as_of: Math.max(...known), stale: known.length < gpus.length };
}

// The node's facts as a person reads them: CPUs and their model, memory in GiB, GPUs.
function nodeFacts(detail) {
  const cpus = format.countOf(detail.cpu_count, "CPU");
  return facts([
    ["CPU", detail.cpu_model ? `${cpus} · ${detail.cpu_model}` : `${cpus} (model not labelled)`],
    ["memory", detail.memory_bytes === null ? detail.memory || "—" : format.gib(detail.memory_bytes)],
    ["GPUs", `${format.countOf(detail.gpu_count, "GPU")} · ${detail.gpu_model || "model unknown"}`],
    ["GPU driver", detail.gpu_driver_version || "—"],
    ["OS", detail.os],
    ["kubelet", detail.kubelet_version],
    ["containerd", detail.containerd_version],
  ]);
}

// Changes of one moment alike (a node's 8 GPUs appearing at once) as one row.
export function changeRows(changes) {
  const rows = [];
  for (const change of changes) {
    const last = rows[rows.length - 1];
    const alike =
      last &&
      change.op !== "UPDATE" &&
      last.op === change.op &&
      last.created_at === change.created_at &&
      last.device_type === change.device_type &&
      last.device_name === change.device_name;
    if (alike) last.uuids.push(change.device_uuid);
    else rows.push({ ...change, uuids: [change.device_uuid] });
  }
  return rows;
}

const KINDS = { gpu: ["GPU", "GPUs"], rdma: ["RDMA device", "RDMA devices"] };

function changeWhat(row) {
  const [one, many] = KINDS[row.device_type] || [row.device_type, row.device_type];
  const who = row.uuids.length === 1 ? `${one} ${row.device_name}` : `${row.uuids.length} ${many} ${row.device_name}`;
  if (row.op === "CREATE") return `${who} appeared`;
  if (row.op === "DELETE") return `${who} left`;
  return `${who} changed: ${row.changes}`;
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
  const [gpus, devices, metrics, now, before, changes] = await Promise.all([
    getAll("/v1/gpus", { node: name, order_by: "node", desc: false }),
    get(`${path}/gpuDevices`),
    get(`${path}/gpuMetrics`, range),
    get(`${path}/workloads`, { page_size: pageSize(100) }),
    get(`${path}/workloadsHistory`, { page_size: pageSize(20) }),
    get(`${path}/changelog`, { page_size: pageSize(20) }),
  ]);
  return h(
    "div",
    null,
    h("h1", null, `${detail.name} `, badge(detail.health, detail.health === "Ready" ? "good" : "bad")),
    h("div", { class: "panel" }, nodeFacts(detail), h("div", { class: "note" }, "facts ", asOf(detail.measured, { name: "node" }))),
    section("GPUs now", h("div", { class: "toolbar" }, asOf(gpusMeasured(gpus.data), { name: "gpus", missing: "no readings yet" })), gpuTable(gpus, new Map(devices.map((d) => [d.uuid, d.health])))),
    section(
      "History",
      h("div", { class: "toolbar" }, rangePicker(params, update)),
      h(
        "div",
        { class: "charts" },
        timeChart("GPU utilization (%)", perGpuSeries(metrics.gpu_utilization, "utilization"), { format: (v, d) => format.percent(v, d), range: [0, 100], name: "gpu-utilization", span: range }),
        timeChart("GPUs allocated (%)", perGpuSeries(metrics.gpu_allocation_rate, "allocation"), { format: (v, d) => format.percent(v, d), range: [0, 100], name: "gpu-allocation", span: range }),
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
          { label: "status", cell: (w) => statusBadge(w.status, "") },
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
          { label: "change", cell: (c) => c.op },
          { label: "what", cell: changeWhat },
          { label: "devices", cell: (c) => h("span", { class: "quiet", title: c.uuids.join("\n"), text: c.uuids.length === 1 ? c.uuids[0] : `${c.uuids[0]} and ${c.uuids.length - 1} more` }) },
        ],
        changeRows(changes.data),
        { name: "changelog", emptyText: "No device has appeared, changed or left yet." },
      ),
    ),
  );
}
