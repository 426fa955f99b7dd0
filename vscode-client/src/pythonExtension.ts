// The interpreter of the environment selected in the Python extension (`ms-python.python`) for a folder, through
// its published API (`@vscode/python-extension`), when that extension is installed.
import { PythonExtension } from "@vscode/python-extension";
import type * as vscode from "vscode";

async function environments(): Promise<PythonExtension["environments"] | undefined> {
  try {
    return (await PythonExtension.api()).environments;
  } catch {
    return undefined; // not installed, disabled, or failed to activate: the search goes on without it
  }
}

export async function selectedInterpreter(folder?: vscode.Uri): Promise<string | undefined> {
  const envs = await environments();
  if (envs === undefined) {
    return undefined;
  }
  try {
    const active = envs.getActiveEnvironmentPath(folder);
    const resolved = await envs.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

export async function onInterpreterChange(listener: (folder: vscode.Uri | undefined) => void): Promise<vscode.Disposable | undefined> {
  const envs = await environments();
  return envs?.onDidChangeActiveEnvironmentPath((e) => listener(e.resource?.uri));
}
