// The cluster at a glance: nodes, GPUs held, busy and idle, and allocation and utilization
// over time.
import { get, pageSize } from "../api.js";
import { rangePicker, rangeQuery, timeChart } from "../chart.js";
import { card, empty, h, section, table, workloadLink } from "../dom.js";
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

export async function render({ params, update }) {
  const range = rangeQuery(params);
  const [overview, idleNow, history, consumers] = await Promise.all([
    get("/v1/clusters/overview"),
    get("/v1/idle", { page_size: 1 }),
    get("/v1/nodes/gpuUtilizationHistory", range),
    get("/v1/clusters/consumers", { page_size: pageSize(10) }),
  ]);
  const page = h("div", null, h("h1", { text: "Cluster overview" }));
  if (overview.totalNodes === 0) {
    page.append(empty("No GPU nodes yet: they appear once the controller watches a cluster with GPU nodes."));
    return page;
  }
  const o = overview;
  page.append(
    h(
      "div",
      { class: "cards" },
      card("GPU nodes", "totalNodes", o.totalNodes, format.number(o.totalNodes)),
      card("healthy", "healthyNodes", o.healthyNodes, format.number(o.healthyNodes)),
      card("faulty", "faultyNodes", o.faultyNodes, format.number(o.faultyNodes)),
      card("GPUs", "totalGpus", o.totalGpus, format.number(o.totalGpus)),
      card("GPUs allocated", "allocatedGpus", o.allocatedGpus, format.number(o.allocatedGpus)),
      card("allocation", "allocationRate", o.allocationRate, format.percent(o.allocationRate)),
      card("utilization", "utilization", o.utilization, format.percent(o.utilization), "mean of every GPU reporting"),
      card("idle GPUs now", "idleGpus", idleNow.total, format.number(idleNow.total), "held by a pod, unused"),
      card("busy nodes", "busyNodes", o.busyNodes, format.number(o.busyNodes)),
      card("partly idle nodes", "partiallyIdleNodes", o.partiallyIdleNodes, format.number(o.partiallyIdleNodes)),
      card("idle nodes", "fullyIdleNodes", o.fullyIdleNodes, format.number(o.fullyIdleNodes)),
      o.usage_percentage === null
        ? null
        : card("storage used", "usage_percentage", o.usage_percentage, format.percent(o.usage_percentage), format.bytes(o.total_space)),
    ),
  );
  const charts = h(
    "div",
    { class: "charts" },
    timeChart(
      "GPU allocation and utilization",
      [
        { label: "allocation", points: history.allocationRate },
        { label: "utilization", points: history.utilization },
      ],
      { format: (v, d) => format.percent(v, d), range: [0, 100], name: "utilization" },
    ),
    timeChart("VRAM used", [{ label: "VRAM", points: history.vramUtilization }], {
      format: (v, d) => format.percent(v, d),
      range: [0, 100],
      name: "vram",
    }),
  );
  page.append(
    section("Over time", h("div", { class: "toolbar" }, rangePicker(params, update)), charts),
    section("Top consumers", consumersTable(consumers)),
  );
  return page;
}
