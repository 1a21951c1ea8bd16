// Every GPU of the cluster on one canvas: one block per node (its GPUs side by side, its name
// above it while there is room), blocks flowing in rows, the cell size the largest that fits
// the width and a screen's height. The figures are the latest complete minute's
// (/v1/clusters/gpuHeatmap). A GPU no pod held in that minute is drawn hollow, whatever its
// figure, so that free is never mistaken for held and idle; a GPU without a reading is grey.
// Hover names the GPU and, once asked for, the pod holding it; a click opens its node.
import { h } from "./dom.js";
import * as format from "./format.js";

export const FIGURES = {
  utilization: { label: "utilization", low: 0, high: 100, text: format.percent },
  power: { label: "power", low: 0, high: 850, text: format.watts },
  temperature: { label: "temperature", low: 20, high: 110, text: format.celsius },
};
const GAP = 6; // pixels between node blocks
const LABEL = 15; // pixels of a node's name above its block
const LABEL_FROM = 12; // the least cell size at which names are drawn
const MAX_CELL = 40;
const MAX_HEIGHT = 640;

// Cool to hot: blue, cyan, green, yellow, red.
const STOPS = [
  [0, [49, 54, 149]],
  [0.25, [69, 117, 180]],
  [0.5, [116, 196, 118]],
  [0.75, [254, 224, 76]],
  [1, [215, 48, 39]],
];

export function colour(share) {
  const t = Math.max(0, Math.min(1, share));
  for (let i = 1; i < STOPS.length; i++) {
    const [at, rgb] = STOPS[i];
    if (t <= at) {
      const [from, start] = STOPS[i - 1];
      const f = (t - from) / (at - from);
      const mixed = start.map((c, k) => Math.round(c + (rgb[k] - c) * f));
      return `rgb(${mixed[0]},${mixed[1]},${mixed[2]})`;
    }
  }
  return "rgb(215,48,39)";
}

// The nodes (from /v1/nodes/gpuAllocation: name and GPU count) in name order, each with its
// GPUs by index: {value (null: no reading), held}.
export function grid(allocation, heat) {
  const cells = new Map();
  for (const cell of heat.Data) cells.set(`${cell.node_name}\u0000${cell.gpu_id}`, cell);
  const widths = new Map(allocation.map((node) => [node.node, node.capacity]));
  for (const cell of heat.Data) {
    widths.set(cell.node_name, Math.max(widths.get(cell.node_name) ?? 0, cell.gpu_id + 1));
  }
  return [...widths.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([node, width]) => ({
      node,
      cells: Array.from({ length: width }, (_, index) => {
        const cell = cells.get(`${node}\u0000${index}`);
        return cell ? { value: cell.value, held: cell.held } : { value: null, held: false };
      }),
    }));
}

export function layout(nodes, width) {
  const perNode = Math.max(1, ...nodes.map((node) => node.cells.length));
  for (let cell = MAX_CELL; cell >= 3; cell--) {
    const label = cell >= LABEL_FROM ? LABEL : 0;
    const blockWidth = perNode * cell + GAP;
    const perRow = Math.max(1, Math.floor((width + GAP) / blockWidth));
    const rows = Math.ceil(nodes.length / perRow);
    const rowHeight = label + cell + GAP;
    if (rows * rowHeight <= MAX_HEIGHT || cell === 3) {
      return { cell, label, blockWidth, perRow, rows, rowHeight, height: rows * rowHeight };
    }
  }
  return null;
}

function holderText(gpu) {
  if (!gpu) return "not in the node's inventory";
  if (!gpu.holder) return gpu.as_of === null ? "no reading yet" : "free: no pod holds it";
  const workload = gpu.holder.workload ? ` · ${gpu.holder.workload.kind} ${gpu.holder.workload.name}` : "";
  return `${gpu.holder.namespace}/${gpu.holder.pod_name}${workload}`;
}

function drawCell(context, x, y, size, cell, figure, colours) {
  const inner = size - (size > 5 ? 1 : 0);
  if (cell.value === null) {
    context.fillStyle = colours.empty;
    context.fillRect(x, y, inner, size);
    return;
  }
  const fill = colour((cell.value - figure.low) / (figure.high - figure.low));
  if (cell.held) {
    context.fillStyle = fill;
    context.fillRect(x, y, inner, size);
    return;
  }
  // Free: the panel's colour inside an outline of the figure's, so it reads as "nobody's".
  const line = Math.max(1, Math.floor(size / 12));
  context.fillStyle = fill;
  context.fillRect(x, y, inner, size);
  context.fillStyle = colours.panel;
  context.fillRect(x + line, y + line, inner - 2 * line, size - 2 * line);
}

// `nodes` from grid(); `gpusOf(node)` a promise of that node's /v1/gpus rows (for hover).
export function heatmap(nodes, figureName, { width, tooltip, open, gpusOf }) {
  const figure = FIGURES[figureName];
  const shape = layout(nodes, width);
  const cells = nodes.reduce((sum, node) => sum + node.cells.length, 0);
  const free = nodes.reduce((sum, node) => sum + node.cells.filter((c) => c.value !== null && !c.held).length, 0);
  const canvas = h("canvas", {
    "data-heatmap": figureName,
    "data-cells": cells,
    "data-free": free,
    "data-cell-px": shape.cell,
    "data-label-px": shape.label,
    "data-per-row": shape.perRow,
  });
  const ratio = globalThis.devicePixelRatio || 1;
  const drawnWidth = shape.perRow * shape.blockWidth;
  canvas.width = Math.ceil(drawnWidth * ratio);
  canvas.height = Math.ceil(shape.height * ratio);
  canvas.style.width = `${drawnWidth}px`;
  canvas.style.height = `${shape.height}px`;
  const context = canvas.getContext("2d");
  context.scale(ratio, ratio);
  const style = getComputedStyle(document.documentElement);
  const colours = { empty: style.getPropertyValue("--empty").trim(), panel: style.getPropertyValue("--panel").trim() };
  context.font = "11px system-ui, sans-serif";
  context.textBaseline = "top";
  nodes.forEach((node, index) => {
    const x0 = (index % shape.perRow) * shape.blockWidth;
    const y0 = Math.floor(index / shape.perRow) * shape.rowHeight;
    if (shape.label) {
      context.fillStyle = style.getPropertyValue("--muted").trim();
      const room = node.cells.length * shape.cell;
      context.fillText(fitted(context, node.node, room), x0, y0 + 1);
    }
    node.cells.forEach((cell, slot) => {
      drawCell(context, x0 + slot * shape.cell, y0 + shape.label, shape.cell, cell, figure, colours);
    });
  });
  const pick = (event) => {
    const bounds = canvas.getBoundingClientRect();
    const x = event.clientX - bounds.left;
    const y = event.clientY - bounds.top;
    const row = Math.floor(y / shape.rowHeight);
    const within = y - row * shape.rowHeight - shape.label;
    const node = nodes[row * shape.perRow + Math.floor(x / shape.blockWidth)];
    const slot = Math.floor((x % shape.blockWidth) / shape.cell);
    if (!node || within < 0 || within >= shape.cell || slot >= node.cells.length) return null;
    return { node: node.node, index: slot, cell: node.cells[slot] };
  };
  let hovered = "";
  canvas.addEventListener("mousemove", (event) => {
    const picked = pick(event);
    if (!picked) {
      hovered = "";
      tooltip.hidden = true;
      return;
    }
    place(tooltip, event);
    const key = `${picked.node}/${picked.index}`;
    if (key === hovered) return;
    hovered = key;
    const holder = h("div", { class: "quiet", text: "…" });
    const reading = picked.cell.value === null ? "no reading" : figure.text(picked.cell.value);
    tooltip.replaceChildren(
      h("strong", { text: `${picked.node} · GPU ${picked.index}` }),
      h("div", { text: `${figure.label} ${reading}${picked.cell.value !== null && !picked.cell.held ? " · free" : ""}` }),
      holder,
    );
    place(tooltip, event);
    gpusOf(picked.node).then(
      (gpus) => {
        if (hovered !== key) return;
        const gpu = gpus.find((one) => one.gpu_id === picked.index);
        holder.className = "";
        holder.textContent = `${gpu ? `${gpu.model} · ` : ""}${holderText(gpu)}`;
      },
      () => {
        holder.textContent = "its pod could not be read";
      },
    );
  });
  canvas.addEventListener("mouseleave", () => {
    hovered = "";
    tooltip.hidden = true;
  });
  canvas.addEventListener("click", (event) => {
    const picked = pick(event);
    if (picked) {
      tooltip.hidden = true;
      open(picked.node);
    }
  });
  return h("div", { class: "heatmap" }, legend(figure, colours), canvas);
}

// A name cut to `room` pixels, an ellipsis where it was cut.
function fitted(context, name, room) {
  if (context.measureText(name).width <= room) return name;
  let cut = name;
  while (cut.length > 1 && context.measureText(`${cut}…`).width > room) cut = cut.slice(0, -1);
  return `${cut}…`;
}

// Beside the pointer, turned back inside the window at its right and bottom edges.
function place(tooltip, event) {
  tooltip.hidden = false;
  const margin = 14;
  const { width, height } = tooltip.getBoundingClientRect();
  const left = event.clientX + margin + width > globalThis.innerWidth ? event.clientX - margin - width : event.clientX + margin;
  const top = event.clientY + margin + height > globalThis.innerHeight ? event.clientY - margin - height : event.clientY + margin;
  tooltip.style.left = `${Math.max(0, left)}px`;
  tooltip.style.top = `${Math.max(0, top)}px`;
}

function swatch(paint) {
  const box = h("canvas", { width: 14, height: 14, class: "swatch" });
  paint(box.getContext("2d"));
  return box;
}

function legend(figure, colours) {
  const ramp = h("canvas", { width: 160, height: 10 });
  const context = ramp.getContext("2d");
  for (let x = 0; x < 160; x++) {
    context.fillStyle = colour(x / 159);
    context.fillRect(x, 0, 1, 10);
  }
  const hollow = swatch((c) => drawCell(c, 0, 0, 14, { value: figure.low, held: false }, figure, colours));
  const grey = swatch((c) => drawCell(c, 0, 0, 14, { value: null, held: false }, figure, colours));
  return h(
    "div",
    { class: "legend" },
    `held: ${figure.text(figure.low)}`,
    ramp,
    figure.text(figure.high),
    h("span", { class: "legend-item" }, hollow, "free (no pod holds it)"),
    h("span", { class: "legend-item" }, grey, "no reading in the minute"),
  );
}
