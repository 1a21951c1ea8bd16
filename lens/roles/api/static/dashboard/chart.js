// Time series drawn with uPlot (vendored): series of {timestamp, value} points aligned on the
// union of their timestamps, colours and axes from the theme.
import { now } from "./api.js";
import { empty, h } from "./dom.js";
import * as view from "./view.js";

const RANGES = { "1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400 };
const POINTS = 360; // per series at most, whatever the range

export function rangeSeconds(params) {
  return RANGES[view.choice(params, "range", RANGES, "6h")];
}

// The query of a range ending now: start, end and a step giving at most POINTS points.
export function rangeQuery(params) {
  const seconds = rangeSeconds(params);
  const end = now();
  const step = Math.max(60, Math.ceil(seconds / POINTS / 60) * 60);
  return { start: end - seconds, end, step };
}

export function rangePicker(params, update) {
  const chosen = view.choice(params, "range", RANGES, "6h");
  return h(
    "label",
    { class: "control" },
    "range",
    h(
      "select",
      { "data-filter": "range", onchange: (event) => update({ range: event.target.value }) },
      Object.keys(RANGES).map((key) => h("option", { value: key, selected: key === chosen, text: key })),
    ),
  );
}

function themeColour(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

// As many decimals as the ticks' spacing needs (20 %: none; 0.05: two), three at most.
function tickDigits(ticks) {
  const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 1;
  return step > 0 ? Math.min(3, Math.max(0, -Math.floor(Math.log10(step)))) : 0;
}

function aligned(series) {
  const stamps = new Set();
  for (const one of series) for (const point of one.points) stamps.add(point.timestamp);
  const xs = [...stamps].sort((a, b) => a - b);
  const columns = series.map((one) => {
    const byStamp = new Map(one.points.map((point) => [point.timestamp, point.value]));
    return xs.map((x) => (byStamp.has(x) ? byStamp.get(x) : null));
  });
  return [xs, ...columns];
}

// A chart of `series` ([{label, points}]) in a panel titled `title`; `format` writes a value.
export function timeChart(title, series, { format, range, name }) {
  const panel = h("div", { class: "panel chart", "data-chart": name || title }, h("h3", { text: title }));
  const drawn = series.filter((one) => one.points.length > 0);
  if (drawn.length === 0) {
    panel.append(empty("No data in this range yet."));
    return panel;
  }
  const text = themeColour("--text");
  const line = themeColour("--line");
  const axis = { stroke: text, grid: { stroke: line, width: 1 }, ticks: { stroke: line } };
  const options = {
    width: 320,
    height: 220,
    series: [
      {},
      ...drawn.map((one, index) => ({
        label: one.label,
        stroke: themeColour(`--chart-${(index % 8) + 1}`),
        width: 1.5,
        spanGaps: false,
        value: (_plot, value) => format(value),
      })),
    ],
    axes: [axis, { ...axis, size: 70, values: (_plot, ticks) => ticks.map((tick) => format(tick, tickDigits(ticks))) }],
    scales: range ? { y: { range: () => range } } : {},
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
  };
  // uPlot draws into an element in the document, as wide as its panel once attached.
  panel.draw = () => {
    options.width = Math.max(320, panel.clientWidth - 26);
    return new globalThis.uPlot(options, aligned(drawn), panel);
  };
  return panel;
}
