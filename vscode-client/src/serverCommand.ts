// Finding the `cudalens serve` command, the way ruff-vscode finds ruff: explicit settings first, then the
// Python environment the user picked in VS Code, then PATH. In Restricted Mode nothing inside the workspace runs
// (not even the import probe). Kept free of `vscode` so it is tested in plain Node.
import { execFile } from "node:child_process";
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { insideFolders } from "./trust";

export type ServerSource = "cudalens.path" | "cudalens.interpreter" | "python-extension" | "PATH";

export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerSource;
  // The interpreter that runs the server, when known: the default for GPU jobs (`worker.python`).
  python?: string;
}

export interface ServerSearch {
  pathSetting: readonly string[];
  interpreterSetting: readonly string[];
  // The interpreter of the environment selected in the Python extension, if that extension is there.
  pythonExtensionInterpreter?: string;
  // The PATH to search for `cudalens` (the extension host's environment).
  envPath?: string;
  workspaceFolder?: string;
  // Restricted Mode: the workspace folders, whose programs are never run (a repository's `.venv/bin/python` or
  // `.tools/cudalens` would run its own code). Undefined in a trusted workspace.
  untrustedFolders?: readonly string[];
}

// A probe answers whether an interpreter can import cudalens. It runs the interpreter, so it is injected:
// tests pass the real probe too, but can count calls.
export type CudalensProbe = (python: string) => Promise<boolean>;

// Raised with a message that tells the user what to change; the extension shows it as is.
export class ServerNotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServerNotFound";
  }
}

const INSTALL_FIX =
  "Install cudalens (`pip install cudalens`) into the Python environment selected in VS Code, " +
  "or set `cudalens.path` to a `cudalens` executable, or `cudalens.interpreter` to a Python that has it.";

export async function findServer(search: ServerSearch, probe: CudalensProbe): Promise<ServerCommand> {
  const tried: string[] = [];
  const runnable = (file: string): boolean => {
    if (search.untrustedFolders !== undefined && insideFolders(file, search.untrustedFolders, resolved)) {
      tried.push(`${file} is inside this workspace, which is not trusted (Restricted Mode)`);
      return false;
    }
    return true;
  };
  const executable = firstExecutable(
    "cudalens.path",
    search.pathSetting,
    search.workspaceFolder,
    "Point it at the `cudalens` executable, or clear it to use the Python environment.",
    runnable,
  );
  if (executable !== undefined) {
    return { command: executable, args: ["serve"], source: "cudalens.path" };
  }

  const python = firstExecutable(
    "cudalens.interpreter",
    search.interpreterSetting,
    search.workspaceFolder,
    "Point it at a Python interpreter, or clear it to use the Python environment selected in VS Code.",
    runnable,
  );
  if (python !== undefined) {
    if (!(await probe(python))) {
      throw new ServerNotFound(
        `The interpreter ${python} (cudalens.interpreter) cannot import cudalens. ` +
          `Install it there: \`${python} -m pip install cudalens\`.`,
      );
    }
    return pythonServer(python, "cudalens.interpreter");
  }

  const selected = search.pythonExtensionInterpreter;
  if (selected !== undefined && selected !== "" && runnable(selected)) {
    if (isExecutableFile(selected) && (await probe(selected))) {
      return pythonServer(selected, "python-extension");
    }
    tried.push(`the selected Python environment (${selected}) cannot import cudalens`);
  }

  const onPath = whichOnPath("cudalens", search.envPath, runnable);
  if (onPath !== undefined) {
    return { command: onPath, args: ["serve"], source: "PATH" };
  }
  tried.push("no `cudalens` executable on PATH");
  throw new ServerNotFound(`cudalens was not found: ${tried.join("; ")}. ${INSTALL_FIX}`);
}

// The first executable entry of a path setting; undefined when the setting is empty (or, in Restricted Mode, names
// only programs of the workspace), and an error that says how to fix it when it is set but names nothing runnable
// (no silent fallback past a setting the user made).
function firstExecutable(
  setting: string,
  entries: readonly string[],
  workspaceFolder: string | undefined,
  fix: string,
  runnable: (file: string) => boolean,
): string | undefined {
  const paths = entries
    .filter((p) => p.trim() !== "")
    .map((p) => expandVariables(p, workspaceFolder))
    .filter(runnable);
  if (paths.length === 0) {
    return undefined;
  }
  const found = paths.find(isExecutableFile);
  if (found === undefined) {
    throw new ServerNotFound(`${setting} is set to ${listed(paths)}, but none of these is an executable file. ${fix}`);
  }
  return found;
}

function pythonServer(python: string, source: ServerSource): ServerCommand {
  return { command: python, args: ["-m", "cudalens", "serve"], source, python };
}

function listed(paths: readonly string[]): string {
  return paths.map((p) => `"${p}"`).join(", ");
}

// The variables ruff-vscode and VS Code's own settings accept in paths.
export function expandVariables(entry: string, workspaceFolder: string | undefined): string {
  let out = entry.trim();
  if (out === "~" || out.startsWith("~/")) {
    out = os.homedir() + out.slice(1);
  }
  out = out.replace(/\$\{userHome\}/g, os.homedir());
  if (workspaceFolder !== undefined) {
    out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  return out;
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) {
      return false;
    }
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// A relative PATH entry ("", ".", "bin") is relative to the server's working folder, the workspace: skipped.
export function whichOnPath(
  name: string,
  envPath: string | undefined,
  runnable: (file: string) => boolean = () => true,
): string | undefined {
  if (envPath === undefined) {
    return undefined;
  }
  const suffixes = process.platform === "win32" ? [".exe", ".cmd", ""] : [""];
  for (const dir of envPath.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) {
      continue;
    }
    for (const suffix of suffixes) {
      const candidate = path.join(dir, name + suffix);
      if (isExecutableFile(candidate) && runnable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

// The file's real path (symlinks followed), or the path itself when it cannot be resolved.
function resolved(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

// The real probe: `python -c "import cudalens"`, bounded so a broken interpreter cannot hang activation.
export const importsCudalens: CudalensProbe = (python) =>
  new Promise((resolve) => {
    execFile(python, ["-c", "import cudalens"], { timeout: 20_000 }, (error) => resolve(error === null));
  });
