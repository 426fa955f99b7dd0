// Which kernel a command is about: the one under the cursor when the server's code lenses or document symbols
// say so, else the user picks. Kept free of `vscode` for plain-Node tests; lines are 0-based as in VS Code.

export interface KernelMark {
  name: string;
  startLine: number;
  // Known when a document symbol gives the kernel's extent; a code lens only gives its first line.
  endLine?: number;
}

export interface KernelChoice {
  // Set when the answer is certain.
  kernel?: string;
  // Otherwise the names to offer, the nearest kernel above the cursor first.
  choices: string[];
}

export function chooseKernel(marks: readonly KernelMark[], cursorLine: number): KernelChoice {
  const names = unique(marks.map((m) => m.name));
  if (names.length === 1) {
    return { kernel: names[0], choices: names };
  }
  const containing = marks.find(
    (m) => m.endLine !== undefined && m.startLine <= cursorLine && cursorLine <= m.endLine,
  );
  if (containing !== undefined) {
    return { kernel: containing.name, choices: names };
  }
  const above = [...marks].filter((m) => m.startLine <= cursorLine).sort((a, b) => b.startLine - a.startLine);
  return { choices: unique([...above.map((m) => m.name), ...names]) };
}

// The kernel name a cudalens code lens carries: command `cudalens.*` with arguments `[uri, kernelName, ...]`.
export function kernelFromLensArguments(command: string, args: readonly unknown[] | undefined): string | undefined {
  if (!command.startsWith("cudalens.") || args === undefined || args.length < 2) {
    return undefined;
  }
  const name = args[1];
  return typeof name === "string" && name !== "" ? name : undefined;
}

// Last resort when the server offers no lenses (an old server, or one still starting): `__global__` functions
// found in the text, which also finds kernels inside Python strings. Names only; the server does the analysis.
export function kernelMarksInText(text: string): KernelMark[] {
  const marks: KernelMark[] = [];
  // Blank out `__launch_bounds__(...)` (same length, so offsets hold): its parenthesis looks like a call.
  const plain = text.replace(/__launch_bounds__\s*\([^)]*\)/g, (m) => " ".repeat(m.length));
  const pattern = /__global__[\s\w:<>,*&]*?\b([A-Za-z_]\w*)\s*\(/g;
  for (const match of plain.matchAll(pattern)) {
    const offset = (match.index ?? 0) + match[0].lastIndexOf(match[1]);
    marks.push({ name: match[1], startLine: countNewlines(plain, offset) });
  }
  return marks;
}

function countNewlines(text: string, end: number): number {
  let lines = 0;
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      lines++;
    }
  }
  return lines;
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}
