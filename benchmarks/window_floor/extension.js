// The floor of benchmarks/first_diagnostics.py --window --floor: cudalens's activation events, and a hint on each
// CUDA file's first line the moment it opens (no process, no analysis). Installed beside cudalens, the same window
// draws both: when the hint shows is VS Code's own part of "opened -> first diagnostic".
const vscode = require("vscode");

function activate(context) {
  const diagnostics = vscode.languages.createDiagnosticCollection("floor");
  const mark = (document) => {
    if (document.languageId !== "cuda-cpp") return;
    const range = new vscode.Range(0, 0, 0, Math.max(1, document.lineAt(0).text.length));
    diagnostics.set(document.uri, [new vscode.Diagnostic(range, "floor", vscode.DiagnosticSeverity.Hint)]);
  };
  vscode.workspace.textDocuments.forEach(mark);
  context.subscriptions.push(diagnostics, vscode.workspace.onDidOpenTextDocument(mark));
}

module.exports = { activate };
