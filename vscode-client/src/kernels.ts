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

// The 0-based line of the brace that closes the body opening at or after `startLine`: a code lens gives only a
// kernel's first line, and VS Code may have no symbol provider for CUDA. Comments and strings are skipped so that a
// brace inside them does not count; undefined when the body does not close.
export function bodyEndLine(text: string, startLine: number): number | undefined {
  let line = 0;
  let i = 0;
  while (line < startLine && i < text.length) {
    if (text.charCodeAt(i++) === 10) {
      line++;
    }
  }
  let depth = 0;
  let opened = false;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
      continue;
    }
    if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      line += countNewlines(text.slice(i, stop), stop - i);
      i = stop;
      continue;
    }
    if (c === '"' || c === "'") {
      i = skipQuoted(text, i);
      continue;
    }
    if (c === "\n") {
      line++;
    } else if (c === "{") {
      depth++;
      opened = true;
    } else if (c === "}" && opened && --depth === 0) {
      return line;
    } else if (c === ";" && !opened) {
      return undefined; // a declaration, not a definition
    }
    i++;
  }
  return undefined;
}

function skipQuoted(text: string, start: number): number {
  const quote = text[start];
  let i = start + 1;
  while (i < text.length && text[i] !== quote && text[i] !== "\n") {
    i += text[i] === "\\" ? 2 : 1;
  }
  return i + 1;
}

// Fills in the extent of marks that have only a first line.
export function withExtents(marks: readonly KernelMark[], text: string): KernelMark[] {
  return marks.map((m) => (m.endLine !== undefined ? m : { ...m, endLine: bodyEndLine(text, m.startLine) }));
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
