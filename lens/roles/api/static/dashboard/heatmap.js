// Every GPU of the cluster on one canvas: one block per node (its GPUs side by side), blocks
// flowing in rows, the cell size the largest that fits the width and a screen's height. The
// figures are the latest complete minute's (/v1/clusters/gpuHeatmap); a node without one is
// grey. Hover names the GPU and, once asked for, the pod holding it; a click opens its node.
import { h } from "./dom.js";
import * as format from "./format.js";

export const FIGURES = {
  utilization: { label: "utilization", low: 0, high: 100, text: format.percent },
  power: { label: "power", low: 0, high: 850, text: format.watts },
  temperature: { label: "temperature", low: 20, high: 110, text: format.celsius },
};
const GAP = 3; // pixels between node blocks
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
// GPUs' values of the figure (from the heatmap's cells; null: no reading), by index.
export function grid(allocation, heat) {
  const values = new Map();
  for (const cell of heat.Data) values.set(`${cell.node_name}\u0000${cell.gpu_id}`, cell.value);
  const widths = new Map(allocation.map((node) => [node.node, node.capacity]));
  for (const cell of heat.Data) {
    widths.set(cell.node_name, Math.max(widths.get(cell.node_name) ?? 0, cell.gpu_id + 1));
  }
  return [...widths.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([node, width]) => ({
      node,
      cells: Array.from({ length: width }, (_, index) => values.get(`${node}\u0000${index}`) ?? null),
    }));
}

function layout(nodes, width) {
  const perNode = Math.max(1, ...nodes.map((node) => node.cells.length));
  for (let cell = 28; cell >= 3; cell--) {
    const blockWidth = perNode * cell + GAP;
    const perRow = Math.max(1, Math.floor((width + GAP) / blockWidth));
    const rows = Math.ceil(nodes.length / perRow);
    if (rows * (cell + GAP) <= MAX_HEIGHT || cell === 3) {
      return { cell, blockWidth, perRow, rows, height: rows * (cell + GAP) };
    }
  }
  return null;
}

function holderText(gpu) {
  if (!gpu) return "not in the node's inventory";
  if (!gpu.holder) return gpu.as_of === null ? "no reading yet" : "free";
  const workload = gpu.holder.workload ? ` · ${gpu.holder.workload.kind} ${gpu.holder.workload.name}` : "";
  return `${gpu.holder.namespace}/${gpu.holder.pod_name}${workload}`;
}

// `nodes` from grid(); `gpusOf(node)` a promise of that node's /v1/gpus rows (for hover).
export function heatmap(nodes, figureName, { width, tooltip, open, gpusOf }) {
  const figure = FIGURES[figureName];
  const shape = layout(nodes, width);
  const cells = nodes.reduce((sum, node) => sum + node.cells.length, 0);
  const canvas = h("canvas", { "data-heatmap": figureName, "data-cells": cells });
  const ratio = globalThis.devicePixelRatio || 1;
  const drawnWidth = shape.perRow * shape.blockWidth;
  canvas.width = Math.ceil(drawnWidth * ratio);
  canvas.height = Math.ceil(shape.height * ratio);
  canvas.style.width = `${drawnWidth}px`;
  canvas.style.height = `${shape.height}px`;
  const context = canvas.getContext("2d");
  context.scale(ratio, ratio);
  const emptyColour = getComputedStyle(document.documentElement).getPropertyValue("--empty").trim();
  const span = figure.high - figure.low;
  nodes.forEach((node, index) => {
    const x0 = (index % shape.perRow) * shape.blockWidth;
    const y0 = Math.floor(index / shape.perRow) * (shape.cell + GAP);
    node.cells.forEach((value, slot) => {
      context.fillStyle = value === null ? emptyColour : colour((value - figure.low) / span);
      context.fillRect(x0 + slot * shape.cell, y0, shape.cell - (shape.cell > 5 ? 1 : 0), shape.cell);
    });
  });
  const pick = (event) => {
    const bounds = canvas.getBoundingClientRect();
    const x = event.clientX - bounds.left;
    const y = event.clientY - bounds.top;
    const node = nodes[Math.floor(y / (shape.cell + GAP)) * shape.perRow + Math.floor(x / shape.blockWidth)];
    const slot = Math.floor((x % shape.blockWidth) / shape.cell);
    if (!node || x % shape.blockWidth >= shape.blockWidth - GAP || slot >= node.cells.length) return null;
    return { node: node.node, index: slot, value: node.cells[slot] };
  };
  let hovered = "";
  canvas.addEventListener("mousemove", (event) => {
    const picked = pick(event);
    if (!picked) {
      hovered = "";
      tooltip.hidden = true;
      return;
    }
    const key = `${picked.node}/${picked.index}`;
    tooltip.style.left = `${event.clientX + 14}px`;
    tooltip.style.top = `${event.clientY + 14}px`;
    tooltip.hidden = false;
    if (key === hovered) return;
    hovered = key;
    const holder = h("div", { class: "quiet", text: "…" });
    tooltip.replaceChildren(
      h("strong", { text: `${picked.node} · GPU ${picked.index}` }),
      h("div", { text: `${figure.label} ${picked.value === null ? "no reading" : figure.text(picked.value)}` }),
      holder,
    );
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
  return h("div", { class: "heatmap" }, canvas, legend(figure));
}

function legend(figure) {
  const ramp = h("canvas", { width: 160, height: 10 });
  const context = ramp.getContext("2d");
  for (let x = 0; x < 160; x++) {
    context.fillStyle = colour(x / 159);
    context.fillRect(x, 0, 1, 10);
  }
  return h(
    "div",
    { class: "legend" },
    figure.text(figure.low),
    ramp,
    figure.text(figure.high),
    h("span", { class: "quiet", text: "· grey: no reading in the latest minute" }),
  );
}
