""""Find hot ops" above the `nn.Module` subclasses of a Python file that builds a whole model
(docs/model.md: `model_and_inputs()`, or KernelBench's `Model`/`get_inputs`): the lens runs
`cudalens.findHotOps` with the file's entry. A file without an entry gets no lens: there is nothing to run."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from lsprotocol import types

from cudalens.analysis import python_ast
from cudalens.server.commands import FIND_HOT_OPS
from cudalens.server.convert import Positions

FIND_HOT_OPS_TITLE = "Find hot ops"
DEFAULT_ENTRY = "model_and_inputs"  # lib/model_entry.py's
_MODULE_BASES = frozenset({"nn.Module", "torch.nn.Module", "Module"})


@dataclass(frozen=True)
class ModelClass:
    name: str
    line: int  # 1-based, of the `class` keyword


def model_classes(text: str) -> tuple[list[ModelClass], str | None]:
    """The top-level `nn.Module` subclasses, and the entry that builds the model (None: the KernelBench
    convention; no classes when the file has no entry or does not parse)."""
    try:
        tree = python_ast.parse(text)
    except (SyntaxError, ValueError):
        return [], None
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if DEFAULT_ENTRY in functions:
        entry = DEFAULT_ENTRY
    elif "get_inputs" in functions and any(c.name == "Model" for c in classes):
        entry = None
    else:
        return [], None
    found = [ModelClass(c.name, c.lineno) for c in classes if any(ast.unparse(b) in _MODULE_BASES for b in c.bases)]
    if entry is None:  # a KernelBench file: the lens belongs on Model, not on ModelNew
        found = [c for c in found if c.name == "Model"]
    return found, entry


def model_lenses(uri: str, text: str, pos: Positions, runs: bool = True) -> list[types.CodeLens]:
    """`runs`: off in an untrusted workspace, where the command would only be refused."""
    if not runs:
        return []
    classes, entry = model_classes(text)
    lenses = []
    for c in classes:
        at = pos.to_lsp(c.line, 1)
        command = types.Command(title=FIND_HOT_OPS_TITLE, command=FIND_HOT_OPS, arguments=[uri, entry])
        lenses.append(types.CodeLens(types.Range(at, at), command))
    return lenses
