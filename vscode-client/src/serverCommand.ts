// Finding the `cudalens serve` command, the way ruff-vscode finds ruff: explicit settings first, then a `.venv` in
// the folder or above it up to its repository's root (where `make setup` in a cudalens clone puts it, also when a
// subfolder of the clone is opened), then the Python environment the user picked in VS Code, then PATH. In
// Restricted Mode nothing of the workspace or its repository runs (not even the import probe), so those `.venv`s
// are skipped there. Kept free of `vscode` so it is tested in plain Node.
import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { insideFolders } from "./trust";

export type ServerSource = "cudalens.path" | "cudalens.interpreter" | ".venv" | "python-extension" | "PATH";

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
  // The interpreter of the environment selected in the Python extension, if that extension is there: asked only
  // when the search gets that far (asking activates the Python extension, which takes seconds in a new window,
  // and a `.venv` or a setting found before it needs no answer).
  pythonExtensionInterpreter?: () => Promise<string | undefined>;
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

// cudalens is not on a package index: it runs from a clone, where `make setup` makes `<clone>/.venv/bin/cudalens`.
export const INSTALL_FIX =
  "Set `cudalens.path` to a `cudalens` executable — in a clone of cudalens, `make setup` makes " +
  "`<clone>/.venv/bin/cudalens` — or `cudalens.interpreter` to a Python where `pip install -e <clone>` ran; " +
  "in a remote window (Remote-SSH), on the Remote tab of the settings.";

// Where a virtual environment keeps its console scripts.
const VENV_BIN = process.platform === "win32" ? path.join(".venv", "Scripts", "cudalens.exe") : path.join(".venv", "bin", "cudalens");

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
          `Install it there from a clone of cudalens: \`${python} -m pip install -e <clone>\`.`,
      );
    }
    return pythonServer(python, "cudalens.interpreter");
  }

  if (search.workspaceFolder !== undefined) {
    const folders = venvFolders(search.workspaceFolder);
    const venv = folders.map((f) => path.join(f, VENV_BIN)).find(isExecutableFile);
    if (venv === undefined) {
      tried.push(`no ${VENV_BIN} in ${listedFolders(folders)}`);
    } else if (search.untrustedFolders !== undefined) {
      if (runnable(venv)) {  // above the workspace, in its repository: as untrusted as the workspace
        tried.push(`${venv} is in this workspace's repository, which is not trusted (Restricted Mode)`);
      }
    } else {
      // The environment's own Python runs the GPU jobs unless `worker.python` says otherwise.
      const python = path.join(path.dirname(venv), process.platform === "win32" ? "python.exe" : "python");
      return { command: venv, args: ["serve"], source: ".venv", python: isExecutableFile(python) ? python : undefined };
    }
  }

  const selected = await search.pythonExtensionInterpreter?.();
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

// The folder, then each folder above it up to the root of the git repository that holds it (the nearest with a
// `.git`); the folder alone when it is in no repository (a `.venv` in a home folder is nobody's choice).
export function venvFolders(folder: string): string[] {
  const chain: string[] = [];
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    chain.push(dir);
    if (existsSync(path.join(dir, ".git"))) {
      return chain;
    }
    if (path.dirname(dir) === dir) {
      return [path.resolve(folder)];
    }
  }
}

function listedFolders(folders: readonly string[]): string {
  return folders.length === 1 ? folders[0] : `${folders[0]} or above it up to ${folders[folders.length - 1]}`;
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
