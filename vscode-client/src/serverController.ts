// Owns the language client: finds the server, starts and restarts it, keeps the status bar item and answers the
// server's configuration requests. The decisions live in the plain modules it calls.
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  type ErrorHandler,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  ResponseError,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";
import { onInterpreterChange, selectedInterpreter } from "./pythonExtension";
import { RestartPolicy } from "./restartPolicy";
import { findServer, importsCudalens, type ServerCommand, ServerNotFound } from "./serverCommand";
import { type MappedSettings, mapSettings, serverEnvironment } from "./settings";
import { type ClientPhase, describeStatus, parseStatus, type ServerStatus } from "./status";

export const API_KEY_SECRET = "cudalens.coder.apiKey";
export const STATUS_NOTIFICATION = "cudalens/status";

// `cuda-cpp` comes from VS Code's built-in C++ grammar; the pattern catches .cu/.cuh opened under another id.
const DOCUMENT_SELECTOR = [
  { scheme: "file", language: "cuda-cpp" },
  { scheme: "file", language: "python" },
  { scheme: "file", pattern: "**/*.{cu,cuh}" },
];

// Settings that change how the server process is started, not just what it does.
const RESTART_SETTINGS = ["cudalens.path", "cudalens.interpreter", "cudalens.coder.apiKeyEnv"];

export class ServerController implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel("cudalens");
  private client: LanguageClient | undefined;
  private command: ServerCommand | undefined;
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private readonly policy = new RestartPolicy();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly reportedProblems = new Set<string>();
  private phase: ClientPhase = "stopped";
  private serverStatus: ServerStatus | undefined;
  private lastError: string | undefined;
  // Labels of this client's commands still waiting for the server, newest last.
  private readonly activities: string[] = [];
  // Serialises start/stop so that quick successive restarts do not race.
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.statusItem.name = "cudalens";
    this.statusItem.command = "cudalens.showOutput";
    this.render();
    this.statusItem.show();
    this.disposables.push(
      this.output,
      this.statusItem,
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChange(e)),
    );
    void onInterpreterChange(() => {
      if (vscode.workspace.getConfiguration("cudalens").get<string[]>("interpreter", []).length === 0) {
        void this.restart();
      }
    }).then((d) => d && this.disposables.push(d));
  }

  get runningClient(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  // Shows `label` in the status bar until `work` settles.
  async track<T>(label: string, work: Thenable<T>): Promise<T> {
    this.activities.push(label);
    this.render();
    try {
      return await work;
    } finally {
      this.activities.splice(this.activities.indexOf(label), 1);
      this.render();
    }
  }

  // Settles once the starts, stops and restarts asked for so far are done.
  whenSettled(): Promise<void> {
    return this.queue;
  }

  get notRunningReason(): string {
    return this.lastError ?? "The cudalens server is not running.";
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  restart(): Promise<void> {
    this.policy.reset();
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  dispose(): void {
    // The output channel outlives the stop, which may still write to it.
    void this.stop().finally(() => this.disposables.forEach((d) => d.dispose()));
  }

  // The settings the server sees; `worker.python` falls back to the interpreter the server was found in.
  currentSettings(): MappedSettings {
    const config = vscode.workspace.getConfiguration("cudalens");
    const mapped = mapSettings((key) => config.get(key), this.command?.python);
    for (const problem of mapped.problems) {
      if (!this.reportedProblems.has(problem)) {
        this.reportedProblems.add(problem);
        this.output.appendLine(`[settings] ${problem}`);
        void vscode.window.showWarningMessage(problem);
      }
    }
    return mapped;
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) {
      return;
    }
    this.setPhase("starting");
    const config = vscode.workspace.getConfiguration("cudalens");
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    try {
      this.command = await findServer(
        {
          pathSetting: asList(config.get("path")),
          interpreterSetting: asList(config.get("interpreter")),
          pythonExtensionInterpreter: await selectedInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri),
          envPath: process.env.PATH,
          workspaceFolder: folder,
        },
        importsCudalens,
      );
    } catch (error) {
      const message = error instanceof ServerNotFound ? error.message : `Could not look for cudalens: ${error}`;
      this.fail(message);
      void vscode.window.showErrorMessage(message, "Open settings", "Show output").then((choice) => {
        if (choice === "Open settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "cudalens.");
        } else if (choice === "Show output") {
          this.output.show();
        }
      });
      return;
    }
    const settings = this.currentSettings().settings;
    const apiKey = await this.secrets.get(API_KEY_SECRET);
    const serverOptions: ServerOptions = {
      command: this.command.command,
      args: this.command.args,
      options: { cwd: folder, env: serverEnvironment(process.env, settings.coder.apiKeyEnv, apiKey) },
    };
    this.output.appendLine(
      `[client] starting ${[this.command.command, ...this.command.args].join(" ")} (from ${this.command.source})`,
    );
    const client = new LanguageClient("cudalens", "cudalens", serverOptions, this.clientOptions());
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.lastError = undefined;
        this.setPhase("running");
      } else if (e.newState === State.Stopped && this.phase !== "error") {
        this.setPhase("stopped");
      }
    });
    client.onNotification(STATUS_NOTIFICATION, (payload: unknown) => {
      this.serverStatus = parseStatus(payload);
      this.render();
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.fail(`The cudalens server did not start: ${errorText(error)}. See the cudalens output.`);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.serverStatus = undefined;
    if (client === undefined) {
      return;
    }
    try {
      if (client.needsStop()) {
        await client.stop(5_000);
      }
    } catch (error) {
      this.output.appendLine(`[client] stopping the server failed: ${errorText(error)}`);
    }
    await client.dispose().catch(() => undefined);
    this.setPhase("stopped");
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => ({ settings: this.currentSettings().settings }),
      errorHandler: this.errorHandler(),
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (answers instanceof ResponseError) {
              return answers;
            }
            return params.items.map((item, i) =>
              item.section === "cudalens" ? this.currentSettings().settings : answers[i],
            );
          },
        },
      },
    };
  }

  private errorHandler(): ErrorHandler {
    return {
      error: (_error, _message, count) => ({
        action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
      }),
      closed: async () => {
        this.serverStatus = undefined;
        const decision = this.policy.onCrash(Date.now());
        if (!decision.restart) {
          const message =
            `The cudalens server stopped ${decision.crashesInWindow} times in a few minutes and will not be ` +
            'restarted. See the cudalens output for why, then run "cudalens: Restart server".';
          this.fail(message);
          return { action: CloseAction.DoNotRestart, message };
        }
        this.output.appendLine(
          `[client] the server exited; restarting it in ${decision.delayMs / 1000} s (exit ${decision.crashesInWindow} in a row)`,
        );
        this.setPhase("starting");
        await new Promise((resolve) => setTimeout(resolve, decision.delayMs));
        return { action: CloseAction.Restart, handled: true };
      },
    };
  }

  private onConfigurationChange(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration("cudalens")) {
      return;
    }
    if (RESTART_SETTINGS.some((key) => event.affectsConfiguration(key)) || this.client === undefined) {
      void this.restart();
      return;
    }
    this.reportedProblems.clear();
    void this.runningClient?.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { cudalens: this.currentSettings().settings },
    });
  }

  private fail(message: string): void {
    this.lastError = message;
    this.output.appendLine(`[client] ${message}`);
    this.setPhase("error");
  }

  private setPhase(phase: ClientPhase): void {
    this.phase = phase;
    this.render();
  }

  private render(): void {
    const view = describeStatus(this.phase, this.serverStatus, {
      error: this.lastError,
      activity: this.activities.at(-1),
    });
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
    this.statusItem.accessibilityInformation = { label: view.label };
    this.statusItem.backgroundColor = view.isError
      ? new vscode.ThemeColor("statusBarItem.errorBackground")
      : undefined;
  }
}

function asList(value: unknown): string[] {
  if (typeof value === "string") {
    return [value];
  }
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
