// Owns the language client: finds the server, starts and restarts it, keeps the status bar item and answers the
// server's configuration requests. The decisions live in the plain modules it calls.
//
// The server serves one workspace folder's settings and runs in that folder (its cwd): the folder of the file
// open when it starts, else the first one. Settings are read for that folder (`resource` scope), and a
// `workspace/configuration` request is answered for the folder of its `scopeUri`.
import { type ChildProcess, spawn } from "node:child_process";
import type { Writable } from "node:stream";
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
  Trace,
} from "vscode-languageclient/node";
import { DOCUMENT_SELECTOR } from "./documentSelector";
import { SHOW_PROPOSAL_REQUEST } from "./proposal";
import { ProposalDocuments, ProposalFeature } from "./proposalDiff";
import { onInterpreterChange, selectedInterpreter } from "./pythonExtension";
import { RestartPolicy, StepQueue } from "./restartPolicy";
import { findServer, importsCudalens, type ServerCommand, ServerNotFound } from "./serverCommand";
import { apiKeyEnvOf, SECRETS_FD, serverEnvironment, storedKeyMessage } from "./settings";
import { type ClientPhase, describeStatus, parseStatus, type ServerStatus } from "./status";
import {
  CODER_COMMANDS,
  type CoderChoice,
  choiceKey,
  coderQuestion,
  type Inspector,
  type TrustedSettings,
  trustedGetter,
  trustedSettings,
  type TrustState,
  USE_OWN_CODER,
  USE_WORKSPACE_CODER,
  workspaceCoder,
} from "./trust";

export const API_KEY_SECRET = "cudalens.coder.apiKey";
export const STATUS_NOTIFICATION = "cudalens/status";


// Settings that change how the server process is started, not just what it does.
const RESTART_SETTINGS = ["cudalens.path", "cudalens.interpreter", "cudalens.coder.apiKeyEnv"];

export class ServerController implements vscode.Disposable {
  // A log channel: its level (Developer: Set Log Level… → cudalens) at Trace also traces the LSP messages and,
  // unless `cudalens.logLevel` is set, turns the server's log to debug.
  readonly output = vscode.window.createOutputChannel("cudalens", { log: true });
  private client: LanguageClient | undefined;
  private command: ServerCommand | undefined;
  private process: ChildProcess | undefined;
  // The workspace folder the server serves (settings, cwd); undefined without a folder.
  private folder: vscode.WorkspaceFolder | undefined;
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  // The Coder's proposals, for "Show diff" (the server's cudalens/showProposal).
  private readonly proposals = new ProposalDocuments();
  private readonly policy = new RestartPolicy();
  private readonly disposables: vscode.Disposable[] = [];
  private phase: ClientPhase = "stopped";
  private serverStatus: ServerStatus | undefined;
  private lastError: string | undefined;
  // Labels of this client's commands still waiting for the server, newest last.
  private readonly activities: string[] = [];
  // Serialises start/stop so that quick successive restarts do not race, and merges restarts asked for at once.
  private readonly steps = new StepQueue();
  // What the last start read (startKey): a settings change that leaves it as it was restarts nothing; nor does one
  // while a start is asked for that has not read the settings yet (it will read the new ones).
  private startedWith: string | undefined;
  private startPending = false;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.statusItem.name = "cudalens";
    this.statusItem.command = "cudalens.showOutput";
    this.render();
    this.statusItem.show();
    this.disposables.push(
      this.output,
      this.statusItem,
      this.proposals,
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChange(e)),
      // Trusted now: workspace values of the restricted settings count, and may choose another server.
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.output.info("the workspace is trusted now: restarting the server with its settings");
        void this.restart();
      }),
      this.output.onDidChangeLogLevel(() => this.applyLogLevel(true)),
    );
    void onInterpreterChange((folder) => {
      const mine = folder === undefined || folder.toString() === this.folder?.uri.toString();
      if (mine && this.config().get<string[]>("interpreter", []).length === 0) {
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
    return this.steps.settled();
  }

  get notRunningReason(): string {
    return this.lastError ?? "The cudalens server is not running.";
  }

  start(): Promise<void> {
    this.startPending = true;
    return this.steps.run(() => this.doStart());
  }

  restart(): Promise<void> {
    this.policy.reset();
    this.startPending = true;
    return this.steps.restart(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.steps.run(() => this.doStop());
  }

  dispose(): void {
    // The output channel outlives the stop, which may still write to it.
    void this.stop().finally(() => this.disposables.forEach((d) => d.dispose()));
  }

  // The settings the server sees (of its folder, or of `scope`), with the `trust` object (trust.ts);
  // `worker.python` falls back to the interpreter the server was found in. The server checks the values and
  // shows what it refuses.
  currentSettings(scope?: vscode.Uri): TrustedSettings {
    const config = this.config(scope);
    const inspect: Inspector = (key) => config.inspect(key);
    const mapped = trustedSettings((key) => config.get(key), inspect, this.trustState(inspect), this.command?.python);
    const level = this.output.logLevel;
    const verbose = level === vscode.LogLevel.Trace || level === vscode.LogLevel.Debug;
    if (verbose && config.inspect("logLevel")?.globalValue === undefined && workspaceValue(config, "logLevel") === undefined) {
      mapped.settings.logLevel = "debug";
    }
    return mapped;
  }

  // `cudalens.*` for the server's folder (resource scope), or for the folder of `scope`.
  private config(scope?: vscode.Uri): vscode.WorkspaceConfiguration {
    const folder = scope ? (vscode.workspace.getWorkspaceFolder(scope)?.uri ?? scope) : this.folder?.uri;
    return vscode.workspace.getConfiguration("cudalens", folder);
  }

  // Before a Coder command: when this workspace's settings choose another Coder endpoint than the user's and the
  // user has not answered for this workspace and endpoint, ask (a modal) and remember the answer. False: the
  // user dismissed the question, so the command is not sent.
  async settleCoderEndpoint(): Promise<boolean> {
    const endpoint = this.currentSettings().unansweredCoder;
    if (endpoint === undefined) {
      return true;
    }
    const choice = await vscode.window.showWarningMessage(
      coderQuestion(endpoint),
      { modal: true },
      USE_WORKSPACE_CODER,
      USE_OWN_CODER,
    );
    if (choice === undefined) {
      return false;
    }
    const answer: CoderChoice = choice === USE_WORKSPACE_CODER ? "workspace" : "own";
    await this.context.globalState.update(choiceKey(workspaceId(), endpoint), answer);
    this.output.info(
      `Coder endpoint for this workspace: ${answer === "workspace" ? endpoint.baseUrl : "your own settings"}`,
    );
    await this.pushSettings();
    return true;
  }

  private trustState(inspect: Inspector): TrustState {
    const endpoint = workspaceCoder(inspect);
    const key = endpoint && choiceKey(workspaceId(), endpoint);
    return {
      trusted: vscode.workspace.isTrusted,
      coderChoice: key === undefined ? undefined : this.context.globalState.get<CoderChoice>(key),
    };
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) {
      this.startPending = false;
      return;
    }
    this.setPhase("starting");
    this.folder = servedFolder();
    this.startedWith = this.startKey();
    this.startPending = false;
    const config = this.config();
    const inspect: Inspector = (key) => config.inspect(key);
    const setting = trustedGetter((key) => config.get(key), inspect, this.trustState(inspect));
    const cwd = this.folder?.uri.fsPath;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    if (!vscode.workspace.isTrusted) {
      this.output.info("Restricted Mode: static hints only; nothing of the workspace runs");
    }
    const endpoint = workspaceCoder(inspect);
    if (endpoint !== undefined) {
      this.output.warn(
        `this workspace's settings name the Coder endpoint ${endpoint.baseUrl ?? "api.openai.com"} ` +
          `($${endpoint.apiKeyEnv}): not used unless you choose it when you first ask the Coder here`,
      );
    }
    // VS Code's secret storage takes 0.04-0.46 s to answer in a new code-server window: the server starts without
    // waiting for it and gets the key through a pipe of its own (server/key_pipe.py) when it comes.
    const storedKey = Promise.resolve(this.context.secrets.get(API_KEY_SECRET)).catch(() => undefined);
    try {
      this.command = await findServer(
        {
          pathSetting: asList(setting("path")),
          interpreterSetting: asList(setting("interpreter")),
          pythonExtensionInterpreter: () => selectedInterpreter(this.folder?.uri),
          envPath: process.env.PATH,
          workspaceFolder: cwd,
          untrustedFolders: vscode.workspace.isTrusted ? undefined : folders,
        },
        importsCudalens,
      );
    } catch (error) {
      const message = error instanceof ServerNotFound ? error.message : `Could not look for cudalens: ${error}`;
      this.fail(message);
      void vscode.window.showErrorMessage(message, "Open settings", "Show output").then((choice) => {
        if (choice === "Open settings") {
          // In a remote window (Remote-SSH, code-server) cudalens.path is the remote machine's: its Remote tab,
          // since the User tab does not even list a machine-overridable setting there.
          const where = vscode.env.remoteName ? "workbench.action.openRemoteSettings" : "workbench.action.openSettings";
          void vscode.commands.executeCommand(where, { query: "@id:cudalens.path" });
        } else if (choice === "Show output") {
          this.output.show();
        }
      });
      return;
    }
    // A user setting alone (scope "application"): a workspace cannot keep a process of ours alive past its window.
    const warm = config.inspect<boolean>("warmStart")?.globalValue === true;
    const command = warm ? { ...this.command, args: [...this.command.args, "--warm"] } : this.command;
    const settings = this.currentSettings().settings;
    const apiKeyEnv = apiKeyEnvOf(settings.trust.user);
    const env = serverEnvironment(process.env);
    // Started here rather than by the client, so that its end is logged at the level it deserves (the client
    // calls every exit, a clean one after "stop" included, an error).
    const serverOptions: ServerOptions = async () => {
      const child = spawn(command.command, command.args, { cwd, env, stdio: ["pipe", "pipe", "pipe", "pipe"] });
      const keyPipe = child.stdio[SECRETS_FD] as Writable | null;
      keyPipe?.on("error", () => undefined); // a server that exits before reading it
      void storedKey.then((key) => keyPipe?.end(storedKeyMessage(apiKeyEnv, key)));
      this.process = child;
      child.on("error", (error) => this.output.error(`could not run ${command.command}: ${error.message}`));
      child.on("exit", (code, signal) => {
        const how = signal !== null ? `on signal ${signal}` : `with code ${code}`;
        if (code === 0) {
          this.output.debug(`the server exited ${how}`);
        } else {
          this.output.warn(`the server exited ${how}`);
        }
      });
      return child;
    };
    this.output.info(`starting ${[command.command, ...command.args].join(" ")} (from ${command.source}) in ${cwd ?? "no folder"}`);
    const client = new LanguageClient("cudalens", "cudalens", serverOptions, this.clientOptions());
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.lastError = undefined;
        this.setPhase("running");
        this.applyLogLevel(false); // the settings it started with already say the log level
      } else if (e.newState === State.Stopped && this.phase !== "error") {
        this.setPhase("stopped");
      }
    });
    client.onNotification(STATUS_NOTIFICATION, (payload: unknown) => {
      this.serverStatus = parseStatus(payload);
      this.render();
    });
    client.registerFeature(new ProposalFeature());
    client.onRequest(SHOW_PROPOSAL_REQUEST, (params: unknown) => this.proposals.show(params));
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.fail(`The cudalens server did not start: ${errorText(error)}. See the cudalens output.`);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    const child = this.process;
    this.client = undefined;
    this.process = undefined;
    this.serverStatus = undefined;
    if (client === undefined) {
      return;
    }
    try {
      if (client.needsStop()) {
        await client.stop(5_000);
      }
    } catch (error) {
      this.output.warn(`stopping the server failed: ${errorText(error)}`);
    }
    await client.dispose().catch(() => undefined);
    // A server that did not exit on `exit` is killed (what the client does for the servers it starts itself).
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"), 2_000);
    }
    this.setPhase("stopped");
  }

  // The output channel's level: Trace traces the LSP messages (unless `cudalens.trace.server` says otherwise),
  // Trace or Debug turn the server's log to debug (unless `cudalens.logLevel` says otherwise).
  private applyLogLevel(changed: boolean): void {
    const client = this.runningClient;
    if (client === undefined) {
      return;
    }
    const tracing = this.output.logLevel === vscode.LogLevel.Trace;
    if (this.config().get<string>("trace.server", "off") === "off" && (changed || tracing)) {
      void client.setTrace(tracing ? Trace.Verbose : Trace.Off);
    }
    if (changed) {
      void this.pushSettings();
    }
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => ({ settings: this.currentSettings().settings }),
      errorHandler: this.errorHandler(),
      middleware: {
        // Code lenses and code actions run the server's commands through here.
        executeCommand: async (command, args, next) => {
          if (CODER_COMMANDS.includes(command) && !(await this.settleCoderEndpoint())) {
            return undefined;
          }
          return next(command, args);
        },
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (answers instanceof ResponseError) {
              return answers;
            }
            return params.items.map((item, i) =>
              item.section === "cudalens"
                ? this.currentSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined).settings
                : answers[i],
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
        this.output.warn(
          `the server exited; restarting it in ${decision.delayMs / 1000} s (exit ${decision.crashesInWindow} in a row)`,
        );
        this.setPhase("starting");
        await new Promise((resolve) => setTimeout(resolve, decision.delayMs));
        return { action: CloseAction.Restart, handled: true };
      },
    };
  }

  // A change of how the server starts restarts it; so does any change while none runs (it may find one now) —
  // unless a start is on its way that will read the new values, or the last start read the same: trusting a
  // workspace fires the trust event (a restart) and, 50 ms later, this event for the settings that count now.
  private onConfigurationChange(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration("cudalens")) {
      return;
    }
    const restarts = RESTART_SETTINGS.some((key) => event.affectsConfiguration(key)) || this.client === undefined;
    if (restarts && !this.startPending && this.startKey() !== this.startedWith) {
      this.output.info("the settings that choose the server changed: restarting it");
      void this.restart();
      return;
    }
    void this.pushSettings();
  }

  // The values a start depends on: the trust, the folder served and the settings that choose the server (as
  // trust lets them count).
  private startKey(): string {
    const folder = servedFolder();
    const config = vscode.workspace.getConfiguration("cudalens", folder?.uri);
    const inspect: Inspector = (key) => config.inspect(key);
    const setting = trustedGetter((key) => config.get(key), inspect, this.trustState(inspect));
    const values = RESTART_SETTINGS.map((key) => setting(key.slice("cudalens.".length)));
    return JSON.stringify([vscode.workspace.isTrusted, folder?.uri.toString(), values]);
  }

  private async pushSettings(): Promise<void> {
    await this.runningClient?.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { cudalens: this.currentSettings().settings },
    });
  }

  private fail(message: string): void {
    this.lastError = message;
    this.output.error(message);
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

// The folder the server serves: the one of the file open now, else the first.
function servedFolder(): vscode.WorkspaceFolder | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  return (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
}

function workspaceValue(config: vscode.WorkspaceConfiguration, key: string): unknown {
  const found = config.inspect(key);
  return found?.workspaceFolderValue ?? found?.workspaceValue;
}

// The workspace, as the Coder endpoint answers remember it: its .code-workspace file, else its first folder.
function workspaceId(): string {
  return (vscode.workspace.workspaceFile ?? vscode.workspace.workspaceFolders?.[0]?.uri)?.toString() ?? "";
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
