// VS Code's `cudalens.*` settings → the server's settings object (initializationOptions `{settings}` and the
// answer to workspace/configuration). Which keys there are and their defaults are package.json's, which
// `python -m cudalens.server.settings_export` writes from the server's schema: this module only nests the values
// and turns VS Code's empty ones into null ("unset"). It checks nothing else: the server checks every value with
// the one coercion (worker/child/typed_json.py) and shows, once, what it refuses. Kept free of `vscode`: it reads
// through a getter. Which level of VS Code's settings each value may come from is trust.ts's part.
import * as path from "node:path";
import manifest from "../package.json";

interface Property {
  default?: unknown;
}

const PREFIX = "cudalens.";
const PROPERTIES: Record<string, Property> = manifest.contributes.configuration.properties;

// The extension's own settings (how it starts the server); never sent to it.
export const EXTENSION_KEYS = ["path", "interpreter", "warmStart", "trace.server"];

// Every other `cudalens.*` key is the server's, e.g. "onSave.compile".
export const SERVER_KEYS = Object.keys(PROPERTIES)
  .map((key) => key.slice(PREFIX.length))
  .filter((key) => !EXTENSION_KEYS.includes(key));

// The settings that run a program or turn on running code (package.json's `restrictedConfigurations`).
export const RESTRICTED_KEYS: string[] = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.map(
  (key: string) => key.slice(PREFIX.length),
);

// The nested object the server reads: `{onSave: {compile: false, …}, coder: {baseUrl: …}, …}`.
export interface ServerSettings {
  [key: string]: unknown;
}

// Reads one key under `cudalens.` (e.g. "onSave.compile"); undefined when unset (VS Code's `get` gives the default).
export type SettingGetter = (key: string) => unknown;

export interface MappedSettings {
  settings: ServerSettings;
}

// package.json's default of a key (what VS Code's `get` answers when nothing is set).
export function defaultOf(key: string): unknown {
  return PROPERTIES[PREFIX + key]?.default;
}

// `fallbackPython` fills `worker.python` when the user left it empty: the interpreter the server was found in
// (or the Python extension's), which is the one most likely to have torch.
export function mapSettings(get: SettingGetter, fallbackPython?: string): MappedSettings {
  const settings: ServerSettings = {};
  for (const key of SERVER_KEYS) {
    let value = unset(get(key) ?? defaultOf(key));
    if (key === "worker.python" && value === null && fallbackPython) {
      value = fallbackPython;
    }
    nest(settings, key, value);
  }
  return { settings };
}

// VS Code's empty defaults ("", [], blank entries) are "not set": the project's `[tool.cudalens]` or the server's
// default decides. Strings are trimmed.
function unset(value: unknown): unknown {
  if (typeof value === "string") {
    return value.trim() === "" ? null : value.trim();
  }
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
    const items = value.map((v: string) => v.trim()).filter((v) => v !== "");
    return items.length > 0 ? items : null;
  }
  return value === undefined ? null : value;
}

function nest(target: ServerSettings, key: string, value: unknown): void {
  const parts = key.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    node = (node[part] ??= {}) as ServerSettings;
  }
  node[parts[parts.length - 1]] = value;
}

// One value of the nested object by its key ("coder.apiKeyEnv").
export function valueOf(settings: ServerSettings, key: string): unknown {
  let node: unknown = settings;
  for (const part of key.split(".")) {
    node = typeof node === "object" && node !== null ? (node as ServerSettings)[part] : undefined;
  }
  return node;
}

// The environment variable the key is given to the server under: the settings' name when it is one, else the default.
export function apiKeyEnvOf(settings: ServerSettings): string {
  const name = valueOf(settings, "coder.apiKeyEnv");
  return typeof name === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : String(defaultOf("coder.apiKeyEnv"));
}

// The Coder's endpoint of the settings (null: api.openai.com).
export function baseUrlOf(settings: ServerSettings): string | null {
  const url = valueOf(settings, "coder.baseUrl");
  return typeof url === "string" && url !== "" ? url : null;
}

// The server is started with an extra pipe (file descriptor SECRETS_FD, named by CUDALENS_SECRETS_FD) through which
// the key from VS Code's secret storage follows when the storage answers: the server need not wait for it to start
// (server/key_pipe.py).
export const SECRETS_FD = 3;
export const SECRETS_FD_VARIABLE = "CUDALENS_SECRETS_FD";

// The server process's environment: the extension host's, less relative PATH entries (the server runs in the
// workspace folder, so "." or "bin" there would find the repository's own `nvcc` or `nvidia-smi`), plus the
// variable that names the key's pipe.
export function serverEnvironment(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined) {
      env[name] = name === "PATH" ? absoluteEntries(value) : value;
    }
  }
  env[SECRETS_FD_VARIABLE] = String(SECRETS_FD);
  return env;
}

// What the key's pipe carries: the stored key under the variable name of the user's own settings (never a
// workspace's: it could name PATH or LD_PRELOAD) and CUDALENS_API_KEY; nothing when none is stored. A key already
// in the environment wins over none, but a stored key wins over the environment: the user set it on purpose.
export function storedKeyMessage(apiKeyEnv: string, storedKey: string | undefined): string {
  if (storedKey === undefined || storedKey === "") {
    return "";
  }
  return JSON.stringify({ [apiKeyEnv]: storedKey, CUDALENS_API_KEY: storedKey });
}

function absoluteEntries(searchPath: string): string {
  return searchPath
    .split(path.delimiter)
    .filter((dir) => path.isAbsolute(dir))
    .join(path.delimiter);
}
