// The extension's commands. The kernel commands pick a kernel and forward to the server's executeCommand names
// (`cudalens.optimizeKernel` …, arguments `[uri, kernelName]`); the client's own command ids differ from those,
// because vscode-languageclient registers the server's names itself.
import * as vscode from "vscode";
import { ExecuteCommandRequest, LSPErrorCodes, ResponseError } from "vscode-languageclient/node";
import { chooseKernel, type KernelMark, kernelFromLensArguments, kernelMarksInText, withExtents } from "./kernels";
import { API_KEY_SECRET, errorText, type ServerController } from "./serverController";
import { SHOW_REPORT, showReport } from "./report";
import { apiKeyEnvOf } from "./settings";
import { CODER_COMMANDS } from "./trust";

interface KernelCommand {
  id: string;
  serverCommand: string;
  title: string;
}

const KERNEL_COMMANDS: KernelCommand[] = [
  { id: "cudalens.optimizeKernelAtCursor", serverCommand: "cudalens.optimizeKernel", title: "Optimizing" },
  { id: "cudalens.runTestsAtCursor", serverCommand: "cudalens.runTests", title: "Testing" },
  { id: "cudalens.profileAtCursor", serverCommand: "cudalens.profile", title: "Profiling" },
  { id: "cudalens.validateAtCursor", serverCommand: "cudalens.validate", title: "Validating hints of" },
];

export function registerCommands(
  controller: ServerController,
  secrets: vscode.SecretStorage,
): vscode.Disposable[] {
  return [
    ...KERNEL_COMMANDS.map((c) =>
      vscode.commands.registerCommand(c.id, (uri?: unknown, kernel?: unknown) =>
        runKernelCommand(controller, c, uri, kernel),
      ),
    ),
    vscode.commands.registerCommand("cudalens.restartServer", () => controller.restart()),
    vscode.commands.registerCommand("cudalens.showOutput", () => controller.output.show()),
    vscode.commands.registerCommand("cudalens.setApiKey", () => setApiKey(controller, secrets)),
    vscode.commands.registerCommand(SHOW_REPORT, () => showReport(controller)),
  ];
}

async function runKernelCommand(
  controller: ServerController,
  command: KernelCommand,
  uriArgument: unknown,
  kernelArgument: unknown,
): Promise<void> {
  await controller.whenSettled();
  const client = controller.runningClient;
  if (client === undefined) {
    const choice = await vscode.window.showErrorMessage(controller.notRunningReason, "Show output");
    if (choice !== undefined) {
      controller.output.show();
    }
    return;
  }
  const editor = vscode.window.activeTextEditor;
  const uri = typeof uriArgument === "string" ? uriArgument : editor?.document.uri.toString();
  if (uri === undefined || editor === undefined) {
    void vscode.window.showErrorMessage("cudalens: open a .cu file, or a Python file with CUDA, first.");
    return;
  }
  const kernel = typeof kernelArgument === "string" ? kernelArgument : await pickKernel(editor);
  if (kernel === undefined) {
    return;
  }
  if (CODER_COMMANDS.includes(command.serverCommand) && !(await controller.settleCoderEndpoint())) {
    return;
  }
  // The server reports the run as for a lens: its stage in the status bar, its answer as a message and a line in
  // the cudalens output (server/command_runs.py). Here: the notification with a cancel button, for the palette.
  try {
    const title = `${command.title} ${kernel}`;
    await controller.track(
      title,
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `cudalens: ${title}`, cancellable: true },
        (_progress, token) =>
          client.sendRequest(
            ExecuteCommandRequest.type,
            { command: command.serverCommand, arguments: [uri, kernel] },
            token,
          ),
      ),
    );
  } catch (error) {
    if (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled) {
      return;
    }
    void vscode.window.showErrorMessage(`cudalens: ${errorText(error)}`);
  }
}

// The kernel under the cursor, from the server's code lenses (and document symbols for extents); the user picks
// when the cursor is not inside one.
async function pickKernel(editor: vscode.TextEditor): Promise<string | undefined> {
  const document = editor.document;
  let marks = await kernelMarksFromServer(document.uri);
  if (marks.length === 0) {
    marks = kernelMarksInText(document.getText());
  }
  if (marks.length === 0) {
    void vscode.window.showErrorMessage("cudalens: no CUDA kernel (__global__ function) found in this file.");
    return undefined;
  }
  const choice = chooseKernel(withExtents(marks, document.getText()), editor.selection.active.line);
  if (choice.kernel !== undefined) {
    return choice.kernel;
  }
  return vscode.window.showQuickPick(choice.choices, { placeHolder: "Which kernel?" });
}

async function kernelMarksFromServer(uri: vscode.Uri): Promise<KernelMark[]> {
  const lenses =
    (await vscode.commands.executeCommand<vscode.CodeLens[] | undefined>("vscode.executeCodeLensProvider", uri, 50)) ??
    [];
  const marks: KernelMark[] = [];
  for (const lens of lenses) {
    const name = lens.command && kernelFromLensArguments(lens.command.command, lens.command.arguments);
    if (name !== undefined && !marks.some((m) => m.name === name)) {
      marks.push({ name, startLine: lens.range.start.line });
    }
  }
  if (marks.length === 0) {
    return marks;
  }
  const symbols =
    (await vscode.commands.executeCommand<vscode.DocumentSymbol[] | undefined>(
      "vscode.executeDocumentSymbolProvider",
      uri,
    )) ?? [];
  for (const symbol of flatten(symbols)) {
    const mark = marks.find((m) => m.name === symbol.name && symbol.range.contains(new vscode.Position(m.startLine, 0)));
    if (mark !== undefined) {
      mark.startLine = symbol.range.start.line;
      mark.endLine = symbol.range.end.line;
    }
  }
  return marks;
}

function flatten(symbols: readonly vscode.DocumentSymbol[]): vscode.DocumentSymbol[] {
  return symbols.flatMap((s) => [s, ...flatten(s.children ?? [])]);
}

async function setApiKey(controller: ServerController, secrets: vscode.SecretStorage): Promise<void> {
  const envName = apiKeyEnvOf(controller.currentSettings().settings.trust.user);
  const key = await vscode.window.showInputBox({
    title: "cudalens: API key of the Coder endpoint",
    prompt: `Stored in VS Code's secret storage and given to the server as $${envName}. Leave empty to remove it.`,
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) {
    return;
  }
  if (key.trim() === "") {
    await secrets.delete(API_KEY_SECRET);
    void vscode.window.showInformationMessage("cudalens: API key removed.");
  } else {
    await secrets.store(API_KEY_SECRET, key.trim());
    void vscode.window.showInformationMessage("cudalens: API key stored; restarting the server to use it.");
  }
  await controller.restart();
}
