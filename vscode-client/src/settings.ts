// VS Code's `cudalens.*` settings → the server's settings object (initializationOptions `{settings}` and the
// answer to workspace/configuration). Kept free of `vscode`: it reads through a getter. Which level of VS Code's
// settings each value may come from (workspace trust, the Coder's endpoint) is trust.ts's part.
import * as path from "node:path";

export interface OnSaveSettings {
  compile: boolean;
  test: boolean;
  time: boolean;
  profile: boolean;
}

export interface ServerSettings {
  // null: not set in VS Code, so the project's `[tool.cudalens]` decides.
  select: string[] | null;
  ignore: string[] | null;
  arch: string | null;
  onSave: OnSaveSettings;
  worker: { python: string | null; timeoutSeconds: number };
  coder: {
    baseUrl: string | null;
    model: string | null;
    apiKeyEnv: string;
    temperature: number | null;
    reasoningEffort: string | null;
    timeoutSeconds: number;
    retries: number;
  };
  optimize: { rounds: number; budgetUsd: number };
  logLevel: string;
}

// Reads one key under `cudalens.` (e.g. "onSave.compile"); undefined when unset and without a default.
export type SettingGetter = (key: string) => unknown;

export interface MappedSettings {
  settings: ServerSettings;
  // One line per setting that had the wrong type and fell back to its default.
  problems: string[];
}

export const DEFAULT_SETTINGS: ServerSettings = {
  select: null,
  ignore: null,
  arch: null,
  onSave: { compile: false, test: false, time: false, profile: false },
  worker: { python: null, timeoutSeconds: 300 },
  coder: {
    baseUrl: null,
    model: null,
    apiKeyEnv: "OPENAI_API_KEY",
    temperature: null,
    reasoningEffort: null,
    timeoutSeconds: 300,
    retries: 4,
  },
  optimize: { rounds: 10, budgetUsd: 1 },
  logLevel: "info",
};

const LOG_LEVELS = ["error", "warning", "info", "debug"];

// `fallbackPython` fills `worker.python` when the user left it empty: the interpreter the server was found
// in (or the Python extension's), which is the one most likely to have torch.
export function mapSettings(get: SettingGetter, fallbackPython?: string): MappedSettings {
  const problems: string[] = [];
  const d = DEFAULT_SETTINGS;
  const read = <T>(key: string, fallback: T, check: (v: unknown) => v is T, expected: string): T => {
    const value = get(key);
    if (value === undefined) {
      return fallback;
    }
    if (!check(value)) {
      problems.push(`cudalens.${key} should be ${expected}, not ${JSON.stringify(value)}; using the default.`);
      return fallback;
    }
    return value;
  };
  const codes = (key: string): string[] | null => {
    const list = read(key, [] as string[], isStringList, "a list of rule codes").map((c) => c.trim());
    const nonEmpty = list.filter((c) => c !== "");
    return nonEmpty.length > 0 ? nonEmpty : null;
  };
  const bool = (key: string, fallback: boolean): boolean => read(key, fallback, isBoolean, "true or false");
  const positive = (key: string, fallback: number): number =>
    read(key, fallback, isPositiveNumber, "a positive number");
  const optionalText = (key: string): string | null => emptyToNull(read(key, "", isString, "a string"));
  const optionalNumber = (key: string): number | null =>
    read(key, null as number | null, isNumberOrNull, "a number or null");
  const isLogLevel = (v: unknown): v is string => isString(v) && LOG_LEVELS.includes(v);

  return {
    settings: {
      select: codes("select"),
      ignore: codes("ignore"),
      arch: optionalText("arch"),
      onSave: {
        compile: bool("onSave.compile", d.onSave.compile),
        test: bool("onSave.test", d.onSave.test),
        time: bool("onSave.time", d.onSave.time),
        profile: bool("onSave.profile", d.onSave.profile),
      },
      worker: {
        python: optionalText("worker.python") ?? emptyToNull(fallbackPython ?? ""),
        timeoutSeconds: positive("worker.timeoutSeconds", d.worker.timeoutSeconds),
      },
      coder: {
        baseUrl: optionalText("coder.baseUrl"),
        model: optionalText("coder.model"),
        apiKeyEnv: optionalText("coder.apiKeyEnv") ?? d.coder.apiKeyEnv,
        temperature: optionalNumber("coder.temperature"),
        reasoningEffort: optionalText("coder.reasoningEffort"),
        timeoutSeconds: positive("coder.timeoutSeconds", d.coder.timeoutSeconds),
        retries: read("coder.retries", d.coder.retries, isNonNegativeInteger, "a whole number ≥ 0"),
      },
      optimize: {
        rounds: read("optimize.rounds", d.optimize.rounds, isPositiveInteger, "a whole number ≥ 1"),
        budgetUsd: read("optimize.budgetUsd", d.optimize.budgetUsd, isNonNegativeNumber, "a number ≥ 0"),
      },
      logLevel: read("logLevel", d.logLevel, isLogLevel, `one of ${LOG_LEVELS.join(", ")}`),
    },
    problems,
  };
}

function emptyToNull(text: string): string | null {
  const trimmed = text.trim();
  return trimmed === "" ? null : trimmed;
}

function isString(v: unknown): v is string {
  return typeof v === "string";
}

function isBoolean(v: unknown): v is boolean {
  return typeof v === "boolean";
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every(isString);
}

function isPositiveNumber(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v > 0;
}

function isPositiveInteger(v: unknown): v is number {
  return isPositiveNumber(v) && Number.isInteger(v);
}

function isNonNegativeInteger(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

function isNonNegativeNumber(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0;
}

function isNumberOrNull(v: unknown): v is number | null {
  return v === null || (typeof v === "number" && Number.isFinite(v));
}

// The server process's environment: the extension host's, plus the API key from VS Code's secret storage under
// the variable name of the user's own settings (never a workspace's: it could name PATH or LD_PRELOAD) and
// CUDALENS_API_KEY. A key already in the environment wins over none, but a stored key wins over the environment:
// the user set it on purpose. Relative PATH entries are dropped: the server runs in the workspace folder, so
// "." or "bin" there would find the repository's own `nvcc` or `nvidia-smi`.
export function serverEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  apiKeyEnv: string,
  storedKey: string | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined) {
      env[name] = name === "PATH" ? absoluteEntries(value) : value;
    }
  }
  if (storedKey !== undefined && storedKey !== "") {
    env[apiKeyEnv] = storedKey;
    env.CUDALENS_API_KEY = storedKey;
  }
  return env;
}

function absoluteEntries(searchPath: string): string {
  return searchPath
    .split(path.delimiter)
    .filter((dir) => path.isAbsolute(dir))
    .join(path.delimiter);
}
