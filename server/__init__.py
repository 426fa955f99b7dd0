"""cudalens.server: the language server (`cudalens serve`, `python -m cudalens.server`).

- `app`: the pygls LanguageServer and its handlers, nothing else;
- `service`: what happens to documents (open/change/close, analyse, deliver, re-check), without pygls;
- `documents`, `scheduler`: per-document state; debounced, off-loop, newest-version-wins analysis;
- `convert`, `actions`, `hover`, `lens`: findings → diagnostics, code actions, hover text, code lenses;
- `commands`: the workspace/executeCommand table; `settings`: the editor's settings as dataclasses;
- `watch`: changes outside the editor; `lifecycle`: parent watch, logging, children, stdout protection;
- `main`: the command line.
"""
