// GPU nodes: a sortable, filterable table, or a heatmap of every GPU of the cluster.
import { get, getAll, pageSize } from "../api.js";
import { asOf, badge, filter, h, link, pager, table, urlSort } from "../dom.js";
import * as format from "../format.js";
import { FIGURES, grid, heatmap } from "../heatmap.js";
import * as view from "../view.js";

export const TITLE = "Nodes";
const WANTED = 50; // rows a page

function nodeLink(name) {
  return link(name, view.href(["nodes", name]));
}

function statusBadge(status) {
  return badge(status, status === "Ready" ? "good" : "bad");
}

async function nodeTable(params) {
  const sort = urlSort(params, "name", false);
  const page = view.integer(params, "page", 1, 1);
  const size = pageSize(WANTED);
  const nodes = await get("/v1/nodes", {
    name: params.get("name"),
    gpu_name: params.get("gpu_name"),
    status: params.get("status"),
    order_by: sort.key,
    desc: sort.desc,
    page_num: page,
    page_size: size,
  });
  const columns = [
    { label: "node", sort: "name", cell: (n) => nodeLink(n.name) },
    { label: "address", sort: "address", cell: (n) => n.ip },
    { label: "GPU model", sort: "gpu_name", cell: (n) => n.gpu_name },
    { label: "GPUs", sort: "gpu_count", numeric: true, cell: (n) => format.number(n.gpu_count) },
    { label: "allocated", sort: "gpu_allocation", numeric: true, cell: (n) => format.number(n.gpu_allocation) },
    { label: "utilization", sort: "gpu_utilization", numeric: true, cell: (n) => format.percent(n.gpu_utilization) },
    { label: "status", sort: "status", cell: (n) => statusBadge(n.status) },
  ];
  const filtered = params.has("name") || params.has("gpu_name") || params.has("status");
  const when = nodes.measured;
  return h(
    "div",
    null,
    h(
      "div",
      { class: "toolbar" },
      filter(params, "name", "name"),
      filter(params, "gpu_name", "GPU model"),
      filter(params, "status", "status", [
        ["", "any"],
        ["Ready", "Ready"],
        ["NotReady", "NotReady"],
        ["Unknown", "Unknown"],
      ]),
      h(
        "span",
        { class: "quiet" },
        "nodes ",
        asOf(when.nodes, { name: "nodes" }),
        " · utilization ",
        asOf(when.utilization, { name: "utilization", missing: "no readings yet" }),
      ),
    ),
    table(columns, nodes.data, {
      sort,
      name: "nodes",
      emptyText: filtered ? "No node matches these filters." : "No GPU nodes yet.",
    }),
    nodes.total > size ? pager(page, size, nodes.total) : null,
  );
}

// The node list gives every block (a node without a reading is grey); the heatmap route every
// GPU's figures of the latest complete minute, for all nodes at once.
const ALL_NODES = 10000;

async function gpuHeatmap(params, { width, tooltip }) {
  const chosen = view.choice(params, "figure", FIGURES, "utilization");
  const [allocation, heat] = await Promise.all([
    get("/v1/nodes/gpuAllocation"),
    get("/v1/clusters/gpuHeatmap", { k: ALL_NODES }),
  ]);
  const when = asOf(heat.measured, { name: "heatmap", missing: "no readings yet" });
  const nodes = grid(allocation, heat[chosen]);
  const gpus = nodes.reduce((sum, node) => sum + node.cells.length, 0);
  const picker = h(
    "label",
    { class: "control" },
    "figure",
    h(
      "select",
      { "data-filter": "figure", onchange: (event) => view.update({ figure: event.target.value }) },
      Object.entries(FIGURES).map(([key, figure]) => h("option", { value: key, selected: key === chosen, text: figure.label })),
    ),
  );
  const note = h("span", { class: "quiet" }, `${format.number(gpus)} GPUs · `, when, " · hover for the GPU and its pod, click for its node");
  if (gpus === 0) {
    return h("div", null, h("div", { class: "toolbar" }, picker), h("div", { class: "empty", "data-empty": "", text: "No GPUs reported yet." }));
  }
  const asked = new Map(); // node -> its GPUs, asked once while this view lives
  const gpusOf = (node) => {
    if (!asked.has(node)) asked.set(node, getAll("/v1/gpus", { node, order_by: "node", desc: false }).then((page) => page.data));
    return asked.get(node);
  };
  const drawn = heatmap(nodes, chosen, {
    width: width - 26, // the panel's padding and border
    tooltip,
    gpusOf,
    open: (name) => {
      location.hash = view.href(["nodes", name]);
    },
  });
  return h("div", null, h("div", { class: "toolbar" }, picker, note), h("div", { class: "panel" }, drawn));
}

export async function render(context) {
  const { params } = context;
  const shown = params.get("view") === "heatmap" ? "heatmap" : "table";
  const tabs = h(
    "div",
    { class: "toolbar" },
    ["table", "heatmap"].map((key) =>
      h("button", {
        type: "button",
        "data-view": key,
        disabled: key === shown,
        onclick: () => view.update({ view: key === "table" ? null : key, page: null }),
        text: key === "table" ? "Table" : "GPU heatmap",
      }),
    ),
  );
  const body = shown === "heatmap" ? await gpuHeatmap(params, context) : await nodeTable(params);
  return h("div", null, h("h1", { text: "GPU nodes" }), tabs, body);
}
