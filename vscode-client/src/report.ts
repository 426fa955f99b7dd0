// "cudalens: Show report": the server writes the report page of the active file (its last on-save profile
// included) and answers the page's path; the page opens in a webview beside the editor. The page is
// self-contained (no script, styles and SVG charts inline), so the webview runs no script and loads nothing.
import * as path from "node:path";
import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";
import { errorText, type ServerController } from "./serverController";

export const SHOW_REPORT = "cudalens.showReportForFile";
const SERVER_COMMAND = "cudalens.showReport";

interface ReportAnswer {
  ok?: boolean;
  message?: string;
  path?: string;
}

export async function showReport(controller: ServerController): Promise<vscode.WebviewPanel | undefined> {
  await controller.whenSettled();
  const client = controller.runningClient;
  if (client === undefined) {
    void vscode.window.showErrorMessage(controller.notRunningReason);
    return undefined;
  }
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    void vscode.window.showErrorMessage("cudalens: open a .cu file, or a Python file with CUDA, first.");
    return undefined;
  }
  let answer: ReportAnswer | undefined;
  try {
    answer = (await client.sendRequest(ExecuteCommandRequest.type, {
      command: SERVER_COMMAND,
      arguments: [editor.document.uri.toString()],
    })) as ReportAnswer | undefined;
  } catch (error) {
    void vscode.window.showErrorMessage(`cudalens: ${errorText(error)}`);
    return undefined;
  }
  if (!answer?.ok || typeof answer.path !== "string") {
    void vscode.window.showWarningMessage(answer?.message ?? "cudalens: the server wrote no report");
    return undefined;
  }
  const html = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(answer.path)));
  const panel = vscode.window.createWebviewPanel(
    "cudalens.report",
    `cudalens report: ${path.basename(editor.document.fileName)}`,
    vscode.ViewColumn.Beside,
    { enableScripts: false, localResourceRoots: [] },
  );
  panel.webview.html = html;
  return panel;
}
