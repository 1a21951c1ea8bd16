// Every GPU of the cluster on one canvas: one block per node (its GPUs side by side), blocks
// flowing in rows, the cell size the largest that fits the width and a screen's height. Hover
// names the GPU and the pod holding it; a click opens its node.
import { h } from "./dom.js";
import * as format from "./format.js";

export const FIGURES = {
  utilization: { label: "utilization", low: 0, high: 100, of: (gpu) => gpu.utilization_percent, text: format.percent },
  power: { label: "power", low: 0, high: 850, of: (gpu) => gpu.power_watts, text: format.watts },
  temperature: { label: "temperature", low: 20, high: 110, of: (gpu) => gpu.temperature_celsius, text: format.celsius },
  memory: {
    label: "VRAM used",
    low: 0,
    high: 100,
    of: (gpu) =>
      gpu.memory_used_bytes === null || !gpu.memory_total_bytes ? null : (100 * gpu.memory_used_bytes) / gpu.memory_total_bytes,
    text: format.percent,
  },
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

function nodesOf(gpus) {
  const nodes = new Map();
  for (const gpu of gpus) {
    if (!nodes.has(gpu.node)) nodes.set(gpu.node, []);
    nodes.get(gpu.node).push(gpu);
  }
  for (const list of nodes.values()) list.sort((a, b) => a.gpu_id - b.gpu_id);
  return [...nodes.entries()];
}

function layout(nodes, width) {
  const perNode = Math.max(1, ...nodes.map(([, list]) => list.length));
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
  if (!gpu.holder) return gpu.as_of === null ? "no reading yet" : "free";
  const workload = gpu.holder.workload ? ` · ${gpu.holder.workload.kind} ${gpu.holder.workload.name}` : "";
  return `${gpu.holder.namespace}/${gpu.holder.pod_name}${workload}`;
}

export function heatmap(gpus, figureName, { width, tooltip, open }) {
  const figure = FIGURES[figureName] || FIGURES.utilization;
  const nodes = nodesOf(gpus);
  const shape = layout(nodes, width);
  const canvas = h("canvas", { "data-heatmap": figureName, "data-cells": gpus.length });
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
  nodes.forEach(([, list], index) => {
    const x0 = (index % shape.perRow) * shape.blockWidth;
    const y0 = Math.floor(index / shape.perRow) * (shape.cell + GAP);
    list.forEach((gpu, slot) => {
      const value = figure.of(gpu);
      context.fillStyle = value === null ? emptyColour : colour((value - figure.low) / span);
      context.fillRect(x0 + slot * shape.cell, y0, shape.cell - (shape.cell > 5 ? 1 : 0), shape.cell);
    });
  });
  const pick = (event) => {
    const bounds = canvas.getBoundingClientRect();
    const x = event.clientX - bounds.left;
    const y = event.clientY - bounds.top;
    const index = Math.floor(y / (shape.cell + GAP)) * shape.perRow + Math.floor(x / shape.blockWidth);
    const slot = Math.floor((x % shape.blockWidth) / shape.cell);
    const node = nodes[index];
    if (!node || x % shape.blockWidth >= shape.blockWidth - GAP) return null;
    return node[1][slot] || null;
  };
  canvas.addEventListener("mousemove", (event) => {
    const gpu = pick(event);
    if (!gpu) {
      tooltip.hidden = true;
      return;
    }
    tooltip.replaceChildren(
      h("strong", { text: `${gpu.node} · GPU ${gpu.gpu_id}` }),
      h("div", { text: `${gpu.model} · ${figure.label} ${figure.text(figure.of(gpu))}` }),
      h("div", { text: holderText(gpu) }),
    );
    tooltip.hidden = false;
    tooltip.style.left = `${event.clientX + 14}px`;
    tooltip.style.top = `${event.clientY + 14}px`;
  });
  canvas.addEventListener("mouseleave", () => {
    tooltip.hidden = true;
  });
  canvas.addEventListener("click", (event) => {
    const gpu = pick(event);
    if (gpu) {
      tooltip.hidden = true;
      open(gpu.node);
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
    h("span", { class: "quiet", text: "· grey: no reading" }),
  );
}
