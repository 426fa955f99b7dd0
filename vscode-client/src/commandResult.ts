// What to show for the reply of a cudalens executeCommand. The server answers with a string, or an object with
// a `message` (and, for Optimize kernel, the `resultId` of a candidate the user may apply).
// Kept free of `vscode` for plain-Node tests.

export interface CommandOutcome {
  message: string;
  // When set, the user is offered "Apply", which runs `cudalens.applyOptimization` with this id.
  applyResultId?: string;
  failed: boolean;
}

export function describeCommandResult(title: string, result: unknown): CommandOutcome {
  if (result === null || result === undefined) {
    return { message: `${title}: done.`, failed: false };
  }
  if (typeof result === "string") {
    return { message: result, failed: false };
  }
  if (typeof result !== "object") {
    return { message: `${title}: ${String(result)}`, failed: false };
  }
  const r = result as Record<string, unknown>;
  const message = typeof r.message === "string" ? r.message : `${title}: done.`;
  const id = r.resultId;
  const applyResultId = typeof id === "string" && id !== "" ? id : typeof id === "number" ? String(id) : undefined;
  const failed = r.ok === false || r.success === false;
  return { message, applyResultId, failed };
}
