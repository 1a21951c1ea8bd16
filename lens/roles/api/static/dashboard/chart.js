// Time series drawn with uPlot (vendored): series of {timestamp, value} points aligned on the
// union of their timestamps, colours and axes from the theme. The time axis spans the range
// picked (not the data's: one point is one point in its hour), in the viewer's time zone on a
// 24-hour clock, its labels spaced so that they never overlap.
import { now } from "./api.js";
import { empty, h } from "./dom.js";
import * as format from "./format.js";
import * as view from "./view.js";

const RANGES = { "1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400 };
const POINTS = 360; // per series at most, whatever the range
const TIME_LABEL_PX = 90; // the least room a time label gets: "2026-12-07 14:30" fits twice over

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
export function tickDigits(ticks) {
  const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 1;
  return step > 0 ? Math.min(3, Math.max(0, -Math.floor(Math.log10(step)))) : 0;
}

// A time tick's label: the time of day, with the day where the ticks cross one (or span
// several days apart).
export function timeLabels(ticks) {
  const spacing = ticks.length > 1 ? ticks[1] - ticks[0] : 0;
  let lastDay = "";
  return ticks.map((tick) => {
    const day = format.day(tick);
    const withDay = spacing >= 86400 || day !== lastDay;
    lastDay = day;
    if (spacing >= 86400) return day;
    return withDay ? `${format.clock(tick)}\n${day.slice(5)}` : format.clock(tick);
  });
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

// A chart of `series` ([{label, points}]) in a panel titled `title`; `format` writes a value
// (`format(value, digits)`), `range` bounds the y axis ([low, high] or null: the data's),
// `span` ({start, end}, unix seconds) is the time axis.
export function timeChart(title, series, { format: write, range, name, span }) {
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
      { value: (_plot, value) => (value === null ? "—" : format.when(value)) },
      ...drawn.map((one, index) => ({
        label: one.label,
        stroke: themeColour(`--chart-${(index % 8) + 1}`),
        width: 1.5,
        spanGaps: false,
        points: { show: drawn.every((d) => d.points.length < 60) },
        value: (_plot, value) => write(value),
      })),
    ],
    axes: [
      {
        ...axis,
        space: TIME_LABEL_PX,
        size: 44,
        values: (_plot, ticks) => {
          const labels = timeLabels(ticks);
          panel.dataset.xLabels = JSON.stringify(labels); // what a person reads, for the tests
          return labels;
        },
      },
      { ...axis, size: 76, values: (_plot, ticks) => ticks.map((tick) => write(tick, tickDigits(ticks))) },
    ],
    scales: {
      x: { time: true, ...(span ? { range: () => [span.start, span.end] } : {}) },
      ...(range ? { y: { range: () => range } } : {}),
    },
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    hooks: {
      // What was drawn, for the tests: the time axis's bounds and the plot's width.
      draw: [
        (plot) => {
          panel.dataset.xMin = String(plot.scales.x.min);
          panel.dataset.xMax = String(plot.scales.x.max);
          panel.dataset.plotWidth = String(plot.bbox.width / (globalThis.devicePixelRatio || 1));
        },
      ],
    },
  };
  // uPlot draws into an element in the document, as wide as its panel once attached.
  panel.draw = () => {
    options.width = Math.max(320, panel.clientWidth - 26);
    return new globalThis.uPlot(options, aligned(drawn), panel);
  };
  return panel;
}
