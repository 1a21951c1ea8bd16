// A workload's status as a badge: Kubernetes' words (Pending, Running, Succeeded, Failed with
// its reason, Deleted) in the original's colours for its own (Running green, Done — now
// Succeeded — blue, Deleted gray), yellow for Pending and red for Failed.
import { badge } from "./dom.js";

export const STATUSES = ["Pending", "Running", "Succeeded", "Failed", "Deleted"];
const TONES = { Pending: "warn", Running: "good", Succeeded: "info", Failed: "bad", Deleted: "muted" };

export function statusBadge(status, reason) {
  const text = status === "Failed" && reason ? `Failed: ${reason}` : status;
  const shown = badge(text, TONES[status] || "muted");
  shown.dataset.status = status;
  return shown;
}
