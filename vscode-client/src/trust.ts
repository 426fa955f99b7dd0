// Workspace trust and the Coder endpoint: which level of VS Code's settings each value may come from, and what the
// server is told (the `trust` object beside the settings; docs/security.md). Kept free of `vscode`: it reads
// settings through `inspect`-like getters, so plain-Node tests drive it.
import * as path from "node:path";
import { mapSettings, type MappedSettings, type ServerSettings, type SettingGetter } from "./settings";

// Settings that run a program or turn on running code. In Restricted Mode only their user-level values count
// (package.json lists them in `restrictedConfigurations`, so VS Code withholds workspace values too; this is the
// second lock, and the one the tests can drive). Keys under `cudalens.`.
export const RESTRICTED_KEYS = [
  "path",
  "interpreter",
  "worker.python",
  "onSave.compile",
  "onSave.test",
  "onSave.time",
  "onSave.profile",
  "coder.baseUrl",
  "coder.apiKeyEnv",
];

// The Coder's endpoint and key variable are the user's (`machine` scope in package.json): a value a workspace
// sets is only used once the user said so, per workspace and endpoint.
export const CODER_KEYS = ["coder.baseUrl", "coder.apiKeyEnv"];

// The server commands that send the user's key and source to the Coder endpoint.
export const CODER_COMMANDS = ["cudalens.optimizeKernel", "cudalens.fixWithCoder", "cudalens.askCoder"];

// What VS Code's `WorkspaceConfiguration.inspect(key)` answers, the part used here.
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type Inspector = (key: string) => Inspected | undefined;

export interface CoderEndpoint {
  baseUrl: string | null;
  apiKeyEnv: string;
}

// The user's remembered answer for one workspace's endpoint.
export type CoderChoice = "workspace" | "own";

export interface TrustPayload {
  trusted: boolean;
  // The settings of the user's own level: the server compares them with the effective ones.
  user: ServerSettings;
  // The workspace's endpoint, when the user chose to use it here.
  coderConfirmed: { baseUrl: string; apiKeyEnv: string } | null;
}

export interface TrustedSettings extends MappedSettings {
  settings: ServerSettings & { trust: TrustPayload };
  // The endpoint the workspace sets, when it differs from the user's and the user has not answered yet.
  unansweredCoder?: CoderEndpoint;
}

// The user's level: user settings (and, in a remote window, the remote machine's), else the default.
export function userLevel(inspect: Inspector): SettingGetter {
  return (key) => inspect(key)?.globalValue;
}

function workspaceLevel(inspect: Inspector, key: string): unknown {
  const found = inspect(key);
  return found?.workspaceFolderValue ?? found?.workspaceValue;
}

export interface TrustState {
  trusted: boolean;
  // The answer remembered for the endpoint this workspace sets (see `choiceKey`), if any.
  coderChoice?: CoderChoice;
}

// Each setting's value, from the level it may come from: `get` (VS Code's merged value) for most; in Restricted
// Mode the restricted keys from the user's level only; the Coder's endpoint the user's unless they chose the
// workspace's.
export function trustedGetter(get: SettingGetter, inspect: Inspector, state: TrustState): SettingGetter {
  const user = userLevel(inspect);
  const useWorkspaceCoder = usesWorkspaceCoder(inspect, state);
  return (key) => {
    if (CODER_KEYS.includes(key)) {
      return useWorkspaceCoder ? (workspaceLevel(inspect, key) ?? user(key)) : user(key);
    }
    return !state.trusted && RESTRICTED_KEYS.includes(key) ? user(key) : get(key);
  };
}

function usesWorkspaceCoder(inspect: Inspector, state: TrustState): boolean {
  return state.trusted && state.coderChoice === "workspace" && workspaceCoder(inspect) !== undefined;
}

// The settings to send, with the `trust` object the server checks them against.
export function trustedSettings(
  get: SettingGetter,
  inspect: Inspector,
  state: TrustState,
  fallbackPython?: string,
): TrustedSettings {
  const mapped = mapSettings(trustedGetter(get, inspect, state), fallbackPython);
  const workspace = workspaceCoder(inspect);
  const confirmed = usesWorkspaceCoder(inspect, state) ? mapped.settings.coder : undefined;
  const trust: TrustPayload = {
    trusted: state.trusted,
    user: mapSettings(userLevel(inspect), fallbackPython).settings,
    coderConfirmed: confirmed ? { baseUrl: confirmed.baseUrl ?? "", apiKeyEnv: confirmed.apiKeyEnv } : null,
  };
  const unanswered = state.trusted && workspace !== undefined && state.coderChoice === undefined;
  return {
    settings: { ...mapped.settings, trust },
    problems: mapped.problems,
    unansweredCoder: unanswered ? workspace : undefined,
  };
}

// The endpoint and key variable a workspace's settings choose, when they differ from the user's own.
export function workspaceCoder(inspect: Inspector): CoderEndpoint | undefined {
  const text = (key: string, fallback: string | null): string | null => {
    const value = workspaceLevel(inspect, key) ?? inspect(key)?.globalValue;
    return typeof value === "string" && value.trim() !== "" ? value.trim() : fallback;
  };
  const own = mapSettings(userLevel(inspect)).settings.coder;
  const chosen = { baseUrl: text("coder.baseUrl", own.baseUrl), apiKeyEnv: text("coder.apiKeyEnv", own.apiKeyEnv) ?? "" };
  const set = CODER_KEYS.some((key) => workspaceLevel(inspect, key) !== undefined);
  return set && (chosen.baseUrl !== own.baseUrl || chosen.apiKeyEnv !== own.apiKeyEnv) ? chosen : undefined;
}

// Where the answer is remembered (globalState): per workspace and per endpoint, so a changed endpoint asks again.
export function choiceKey(workspace: string, endpoint: CoderEndpoint): string {
  return JSON.stringify([workspace, endpoint.baseUrl ?? "", endpoint.apiKeyEnv]);
}

export const USE_WORKSPACE_CODER = "Use this workspace's endpoint";
export const USE_OWN_CODER = "Use my own settings";

export function coderQuestion(endpoint: CoderEndpoint): string {
  return (
    `This workspace's settings send the Coder's requests to ${endpoint.baseUrl ?? "api.openai.com"} with the ` +
    `key in $${endpoint.apiKeyEnv}. Your API key and the kernel's source would go there. Use this workspace's ` +
    "endpoint? (Asked once per workspace and endpoint.)"
  );
}

// A path inside one of the workspace folders (a program the workspace ships), compared as given and with
// symlinks followed (`realpath`).
export function insideFolders(file: string, folders: readonly string[], realpath: (p: string) => string): boolean {
  const candidates = [path.resolve(file), realpath(file)];
  return folders.some((folder) => {
    const roots = [path.resolve(folder), realpath(folder)].map((f) => (f.endsWith(path.sep) ? f : f + path.sep));
    return candidates.some((c) => roots.some((root) => c.startsWith(root)));
  });
}
