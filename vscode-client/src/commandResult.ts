// What the reply of a cudalens executeCommand says, for the output. The server answers with a string, or an
// object with a `message` and `ok`. Kept free of `vscode` for plain-Node tests.

export interface CommandOutcome {
  message: string;
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
  return { message, failed: r.ok === false || r.success === false };
}
