// How a workload's training figures read on its page: each figure the training logs gave
// (lens/telemetry/trainlogs/figures.py names them) with a title a person reads, its unit, how
// its values are written, and its place among the charts. A figure not named here still gets
// a readable title from its name.
import * as format from "./format.js";

const plain = (digits) => (value, ticks) => format.number(value, ticks ?? digits);
const inUnit = (unit, digits) => (value, ticks) => (value === null ? "—" : `${format.number(value, ticks ?? digits)} ${unit}`);
const percent = (value, ticks) => format.percent(value, ticks ?? 1);
const tiny = (value) => format.scientific(value, 1);

// name -> [title, write, scale (the stored value times this is what is drawn), order]
const KNOWN = {
  lm_loss: ["Loss", plain(3), 1, 0],
  loss: ["Loss", plain(3), 1, 0],
  elapsed_time_per_iteration_ms: ["Iteration time (s)", inUnit("s", 2), 1 / 1000, 1],
  elapsed_time_per_iteration_avg_ms: ["Iteration time, mean (s)", inUnit("s", 2), 1 / 1000, 2],
  tflops: ["TFLOP/s per GPU", plain(1), 1, 3],
  tflops_avg: ["TFLOP/s per GPU, mean", plain(1), 1, 4],
  tokens_per_gpu: ["Tokens/s per GPU", plain(0), 1, 5],
  tokens_per_gpu_avg: ["Tokens/s per GPU, mean", plain(0), 1, 6],
  samples_per_second: ["Samples/s", plain(1), 1, 7],
  learning_rate: ["Learning rate", tiny, 1, 8],
  decoupled_learning_rate: ["Learning rate, decoupled", tiny, 1, 9],
  grad_norm: ["Gradient norm", plain(3), 1, 10],
  loss_scale: ["Loss scale", plain(0), 1, 11],
  consumed_samples: ["Samples consumed", plain(0), 1, 12],
  global_batch_size: ["Global batch size (samples)", plain(0), 1, 13],
  current_iteration: ["Iteration", plain(0), 1, 14],
  target_iteration: ["Target iteration", plain(0), 1, 15],
  mfu: ["Model FLOPs utilization (%)", percent, 1, 16],
  power_per_gpu_watts: ["Power per GPU (W)", inUnit("W", 0), 1, 17],
  energy_per_gpu_joules: ["Energy per GPU (J)", inUnit("J", 0), 1, 18],
  mem_usages: ["Memory used (GiB)", inUnit("GiB", 1), 1, 19],
  mem_max_usage: ["Memory used, peak (GiB)", inUnit("GiB", 1), 1, 20],
  mem_free: ["Memory free (GiB)", inUnit("GiB", 1), 1, 21],
  mem_total: ["Memory (GiB)", inUnit("GiB", 1), 1, 22],
  mem_usage_ratio: ["Memory used (%)", percent, 1, 23],
  params_norm: ["Parameter norm", plain(3), 1, 24],
  num_zeros: ["Zeros in gradients", plain(0), 1, 25],
  skipped_samples: ["Samples skipped", plain(0), 1, 26],
  skipped_iterations_number: ["Iterations skipped", plain(0), 1, 27],
  nan_iterations_number: ["Iterations with NaN", plain(0), 1, 28],
  actual_seqlen: ["Sequence length (tokens)", plain(0), 1, 29],
  epoch: ["Epoch", plain(2), 1, 30],
};

function readable(name) {
  const words = name.replace(/[_\s]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// What a figure's chart shows: {title, write, scale, order}.
export function describe(name) {
  const known = KNOWN[name];
  if (known) {
    const [title, write, scale, order] = known;
    return { title, write, scale, order };
  }
  // A framework's own name: milliseconds drawn as seconds, like the iteration time.
  if (name.endsWith("_ms")) {
    return { title: `${readable(name.slice(0, -3))} (s)`, write: inUnit("s", 2), scale: 1 / 1000, order: 50 };
  }
  return { title: readable(name), write: plain(2), scale: 1, order: 50 };
}
