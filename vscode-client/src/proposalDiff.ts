// "Show diff" of a Coder proposal in VS Code's own diff editor: the server's `cudalens/showProposal` request puts
// the proposal's text in a read-only virtual document (scheme `cudalens-proposal`, the document's path, the
// proposal's id as its query) and opens `vscode.diff` between the document and it. The client declares the
// request in its capabilities (`ProposalFeature`); without it the server opens a `.diff` file instead.
import * as vscode from "vscode";
import {
  type ClientCapabilities,
  ErrorCodes,
  type FeatureState,
  ResponseError,
  type StaticFeature,
} from "vscode-languageclient/node";
import { PROPOSAL_SCHEME, parseProposal, withProposalCapability } from "./proposal";

export class ProposalDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[];

  constructor() {
    this.disposables = [
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, this),
      // A proposal's text is kept while a diff editor shows it.
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (d.uri.scheme === PROPOSAL_SCHEME) {
          this.texts.delete(d.uri.toString());
        }
      }),
    ];
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  // The request's handler: the diff editor, the document on the left and the proposal on the right.
  async show(params: unknown): Promise<{ shown: boolean }> {
    const proposal = parseProposal(params);
    if (proposal === undefined) {
      throw new ResponseError(ErrorCodes.InvalidParams, "cudalens/showProposal takes {uri, id, text, title}");
    }
    const document = vscode.Uri.parse(proposal.uri);
    // The document's path keeps its file name, so the proposal gets the document's language (and highlighting).
    const uri = document.with({ scheme: PROPOSAL_SCHEME, query: proposal.id });
    this.texts.set(uri.toString(), proposal.text);
    this.changed.fire(uri);
    await vscode.commands.executeCommand("vscode.diff", document, uri, proposal.title, { preview: true });
    return { shown: true };
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
    this.texts.clear();
  }
}

// Declares `experimental.cudalens.showProposal` in the initialize request.
export class ProposalFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = withProposalCapability(capabilities.experimental);
  }

  initialize(): void {}

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {}
}
