// The status bar item's text from the server's `cudalens/status` notification
// (`{gpu: string|null, busy: boolean, message?: string}`) and the client's own states.
// Kept free of `vscode` for plain-Node tests.

export interface ServerStatus {
  gpu: string | null;
  busy: boolean;
  message?: string;
}

export type ClientPhase = "starting" | "running" | "stopped" | "error";

export interface StatusView {
  text: string;
  tooltip: string;
  isError: boolean;
  // For screen readers (the text's icons say nothing), starting with "cudalens <phase>".
  label: string;
}

// Unknown fields are ignored and a malformed payload gives undefined, so a newer server cannot break the item.
export function parseStatus(payload: unknown): ServerStatus | undefined {
  if (typeof payload !== "object" || payload === null) {
    return undefined;
  }
  const p = payload as Record<string, unknown>;
  const gpu = p.gpu === null || p.gpu === undefined ? null : typeof p.gpu === "string" ? p.gpu : undefined;
  if (gpu === undefined || (p.busy !== undefined && typeof p.busy !== "boolean")) {
    return undefined;
  }
  const message = typeof p.message === "string" && p.message !== "" ? p.message : undefined;
  return { gpu, busy: p.busy === true, message };
}

export interface StatusDetail {
  // Why the client is in the error phase.
  error?: string;
  // A command of this client still waiting for the server's answer ("Optimizing scale_rows").
  activity?: string;
}

export function describeStatus(
  phase: ClientPhase,
  status: ServerStatus | undefined,
  detail: StatusDetail = {},
): StatusView {
  const view = viewOf(phase, status, detail);
  return { ...view, label: `cudalens ${phase}: ${view.tooltip}` };
}

function viewOf(phase: ClientPhase, status: ServerStatus | undefined, detail: StatusDetail): Omit<StatusView, "label"> {
  if (phase === "error") {
    return { text: "$(error) cudalens", tooltip: detail.error ?? "The cudalens server is not running.", isError: true };
  }
  if (phase === "stopped") {
    return { text: "$(debug-stop) cudalens", tooltip: "The cudalens server is stopped.", isError: false };
  }
  if (phase === "starting") {
    return { text: "$(loading~spin) cudalens", tooltip: "Starting the cudalens server…", isError: false };
  }
  const gpuLine =
    status === undefined
      ? "cudalens: static hints are on."
      : status.gpu !== null
        ? `GPU: ${status.gpu}`
        : "No GPU found: static hints and compile checks only.";
  const lines = [gpuLine, status?.message, detail.activity].filter((l): l is string => l !== undefined);
  const tooltip = [...new Set(lines)].join("\n");
  const busy = status?.busy === true ? (status.message ?? "working") : detail.activity;
  if (busy !== undefined) {
    return { text: `$(sync~spin) cudalens: ${busy}`, tooltip, isError: false };
  }
  if (status === undefined) {
    return { text: "$(check) cudalens", tooltip, isError: false };
  }
  const where = status.gpu !== null ? status.gpu : "no GPU";
  return { text: `$(circuit-board) cudalens: ${where}`, tooltip, isError: false };
}
