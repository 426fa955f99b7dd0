// Entry point: starts the cudalens language server and registers the commands.
import type * as vscode from "vscode";
import { registerCommands } from "./commands";
import { ServerController } from "./serverController";

let controller: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new ServerController(context);
  context.subscriptions.push(controller, ...registerCommands(controller, context.secrets));
  await controller.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
