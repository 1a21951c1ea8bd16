// The cluster at a glance: nodes, GPUs held, busy and idle, and allocation and utilization
// over time. Each card says when its figure was measured: the nodes' by the jobs' node info,
// the allocation by the controller's watch, utilization in the latest complete minute, idle
// GPUs by the jobs' idle-GPU run.
import { get, pageSize } from "../api.js";
import { rangePicker, rangeQuery, timeChart } from "../chart.js";
import { asOf, card, empty, h, section, table, workloadLink } from "../dom.js";
import * as format from "../format.js";

export const TITLE = "Overview";

function consumersTable(consumers) {
  return table(
    [
      { label: "workload", cell: (c) => workloadLink(c.name, c.uid, c.kind) },
      { label: "kind", cell: (c) => c.kind },
      { label: "namespace", cell: (c) => c.namespace },
      { label: "GPUs", numeric: true, cell: (c) => format.number(c.stat.gpu_request) },
      { label: "utilization", numeric: true, cell: (c) => format.percent(c.stat.gpu_utilization) },
      { label: "pods", numeric: true, cell: (c) => format.number(c.pods.length) },
    ],
    consumers.data,
    { name: "consumers", emptyText: "No GPU pods yet." },
  );
}

// Why the cluster shows no node: nothing watched it yet, or it has none.
function noNodes(sources) {
  if (sources && sources.node_info.as_of === null) {
    return "No GPU nodes yet: the jobs' node info has not run (lens jobs needs a Kubernetes cluster to watch).";
  }
  return "No GPU nodes in this cluster: no node has GPU capacity or a GPU model label.";
}

// Utilization's card note: what the figure is, or why there is none.
function utilizationNote(o, sources) {
  if (o.utilization !== null) return "mean of every GPU reporting";
  if (sources && sources.agents.as_of === null) return "no readings yet: no node agent has reported";
  return "no GPU reported a reading in the latest minute";
}

function idleNote(idle) {
  return idle.measured.as_of === null ? "not computed yet (lens jobs)" : "held by a pod, unused";
}

export async function render({ params, update, sources }) {
  const range = rangeQuery(params);
  const [overview, idleNow, history, consumers] = await Promise.all([
    get("/v1/clusters/overview"),
    get("/v1/idle", { page_size: 1 }),
    get("/v1/nodes/gpuUtilizationHistory", range),
    get("/v1/clusters/consumers", { page_size: pageSize(10) }),
  ]);
  const page = h("div", null, h("h1", { text: "Cluster overview" }));
  if (overview.totalNodes === 0) {
    page.append(empty(noNodes(sources)));
    return page;
  }
  const o = overview;
  const m = o.measured;
  const idleKnown = idleNow.measured.as_of !== null;
  // The nodes' time is named once; a card of another age, or stale, says its own.
  const common = m.nodes;
  page.append(
    h("div", { class: "toolbar" }, h("span", { class: "quiet" }, "figures ", asOf(common, { name: "overview" }), " unless a card says otherwise")),
    h(
      "div",
      { class: "cards" },
      card("GPU nodes", "totalNodes", o.totalNodes, format.number(o.totalNodes), null, m.nodes, common),
      card("healthy", "healthyNodes", o.healthyNodes, format.number(o.healthyNodes), null, m.nodes, common),
      card("faulty", "faultyNodes", o.faultyNodes, format.number(o.faultyNodes), "not Ready, or tainted", m.nodes, common),
      card("GPUs", "totalGpus", o.totalGpus, format.number(o.totalGpus), null, m.nodes, common),
      card("GPUs allocated", "allocatedGpus", o.allocatedGpus, format.number(o.allocatedGpus), null, m.allocation, common),
      card("allocation", "allocationRate", o.allocationRate, format.percent(o.allocationRate), null, m.allocation, common),
      card("utilization", "utilization", o.utilization, format.percent(o.utilization), utilizationNote(o, sources), m.utilization, common),
      card(
        "idle GPUs now",
        "idleGpus",
        idleKnown ? idleNow.total : null,
        idleKnown ? format.number(idleNow.total) : format.number(null),
        idleNote(idleNow),
        idleNow.measured,
        common,
      ),
      card("busy nodes", "busyNodes", o.busyNodes, format.number(o.busyNodes), "every GPU allocated", m.allocation, common),
      card("partly idle nodes", "partiallyIdleNodes", o.partiallyIdleNodes, format.number(o.partiallyIdleNodes), "some GPUs allocated", m.allocation, common),
      card("idle nodes", "fullyIdleNodes", o.fullyIdleNodes, format.number(o.fullyIdleNodes), "no GPU allocated", m.allocation, common),
      o.usage_percentage === null
        ? null
        : card("storage used", "usage_percentage", o.usage_percentage, format.percent(o.usage_percentage), format.bytes(o.total_space), m.storage, common),
    ),
  );
  const charts = h(
    "div",
    { class: "charts" },
    timeChart(
      "GPU allocation and utilization (%)",
      [
        { label: "allocation", points: history.allocationRate },
        { label: "utilization", points: history.utilization },
      ],
      { format: (v, d) => format.percent(v, d), range: [0, 100], name: "utilization", span: range },
    ),
    timeChart("VRAM used (%)", [{ label: "VRAM", points: history.vramUtilization }], {
      format: (v, d) => format.percent(v, d),
      range: [0, 100],
      name: "vram",
      span: range,
    }),
  );
  page.append(
    section("Over time", h("div", { class: "toolbar" }, rangePicker(params, update)), charts),
    section("Top consumers", h("div", { class: "toolbar" }, asOf(consumers.measured, { name: "consumers" })), consumersTable(consumers)),
  );
  return page;
}
