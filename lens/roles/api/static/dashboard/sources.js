// The banner over every page that says when what feeds the figures is missing or late (from
// /v1/about's `sources`): no controller watching, the jobs' node info not run, no agent
// reporting — so that an empty or old figure is never taken for a true one.
import { h } from "./dom.js";
import * as format from "./format.js";

// source -> [what it is, what is missing without it]
const SOURCES = {
  controller: ["The controller (lens controller)", "pods, workloads and GPUs allocated are not being followed"],
  node_info: ["The jobs' node info (lens jobs)", "the nodes' status and GPU counts are not kept"],
  agents: ["The node agents", "GPU readings (utilization, power, holders) are not arriving"],
};

// The problems of `sources` as lines: [source, text], none when every source is current.
export function problems(sources) {
  if (!sources) return [];
  const found = [];
  for (const [key, [who, missing]] of Object.entries(SOURCES)) {
    const measured = sources[key];
    if (!measured) continue;
    if (measured.as_of === null) found.push([key, `${who} has not reported yet: ${missing}.`]);
    else if (measured.stale) {
      const at = format.when(measured.as_of);
      found.push([key, `${who} last reported at ${at}: ${missing} since; figures from it are as of then.`]);
    }
  }
  return found;
}

export function show(banner, sources) {
  const found = problems(sources);
  banner.hidden = found.length === 0;
  banner.replaceChildren(...found.map(([key, text]) => h("div", { "data-source": key, text })));
}
