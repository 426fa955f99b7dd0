// The interpreter of the environment selected in the Python extension (`ms-python.python`), if it is installed.
// Only the part of its API that we use is typed here, so the extension has no build dependency on it.
import * as vscode from "vscode";

interface ResolvedEnvironment {
  executable: { uri?: vscode.Uri };
}

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
  resolveEnvironment(env: { id: string; path: string } | string): Promise<ResolvedEnvironment | undefined>;
  onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  environments?: PythonEnvironmentsApi;
}

const PYTHON_EXTENSION_ID = "ms-python.python";

async function environmentsApi(): Promise<PythonEnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments;
  } catch {
    return undefined;
  }
}

export async function selectedInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  const environments = await environmentsApi();
  if (environments === undefined) {
    return undefined;
  }
  try {
    const active = environments.getActiveEnvironmentPath(resource);
    const resolved = await environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const environments = await environmentsApi();
  return environments?.onDidChangeActiveEnvironmentPath(listener);
}
