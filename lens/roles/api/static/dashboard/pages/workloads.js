// Top-level workloads: filters, sorting, and the GPU-hours each has held.
import { get, pageSize } from "../api.js";
import { asOf, filter, h, link, pager, table, urlSort } from "../dom.js";
import * as format from "../format.js";
import { STATUSES, statusBadge } from "../status.js";
import * as view from "../view.js";

export const TITLE = "Workloads";
const WANTED = 50; // rows a page

// GPU-hours held, summed over GPU models (the API gives GPU-seconds per model).
export function heldHours(allocation) {
  if (!allocation) return null;
  return Object.values(allocation).reduce((sum, seconds) => sum + seconds, 0) / 3600;
}

export async function render({ params }) {
  const sort = urlSort(params, "start_at", true);
  const page = view.integer(params, "page", 1, 1);
  const size = pageSize(WANTED);
  const [metadata, workloads] = await Promise.all([
    get("/v1/workloadMetadata"),
    get("/v1/workloads", {
      name: params.get("name"),
      namespace: params.get("namespace"),
      kind: params.get("kind"),
      status: params.get("status"),
      order_by: sort.key,
      order: sort.desc ? "desc" : "asc",
      page_num: page,
      page_size: size,
    }),
  ]);
  const choices = (values) => [["", "any"], ...values.map((value) => [value, value])];
  const columns = [
    { label: "workload", sort: "name", cell: (w) => link(w.name, view.href(["workloads", w.uid])) },
    { label: "kind", sort: "kind", cell: (w) => w.kind },
    { label: "namespace", sort: "namespace", cell: (w) => w.namespace },
    { label: "GPUs", sort: "gpu_allocated", numeric: true, cell: (w) => format.number(w.gpu_allocated) },
    { label: "GPU-hours", numeric: true, cell: (w) => format.hours(heldHours(w.gpu_allocation)) },
    { label: "status", sort: "status", cell: (w) => statusBadge(w.status, w.status_reason) },
    { label: "started", sort: "start_at", cell: (w) => format.when(w.start_at) },
    { label: "ended", sort: "end_at", cell: (w) => format.when(w.end_at) },
  ];
  const filtered = ["name", "namespace", "kind", "status"].some((key) => params.has(key));
  return h(
    "div",
    null,
    h("h1", { text: "Workloads" }),
    h(
      "div",
      { class: "toolbar" },
      filter(params, "name", "name"),
      filter(params, "namespace", "namespace", choices(metadata.namespaces)),
      filter(params, "kind", "kind", choices(metadata.kinds)),
      filter(params, "status", "status", choices(STATUSES)),
      h(
        "span",
        { class: "quiet" },
        "statuses ",
        asOf(workloads.measured.status, { name: "status" }),
        " · GPU-hours ",
        asOf(workloads.measured.gpu_hours, { name: "gpu-hours" }),
      ),
    ),
    table(columns, workloads.data, {
      sort,
      name: "workloads",
      emptyText: filtered ? "No workload matches these filters." : "No GPU workloads yet.",
    }),
    workloads.total > size ? pager(page, size, workloads.total) : null,
  );
}
