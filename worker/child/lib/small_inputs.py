"""The smallest inputs a reference accepts, for the tools that make every access slow (compute-sanitizer:
racecheck on a 4096² matmul ran past 300 s).

In this order:
1. the reference's own hook: `get_small_inputs()` (and `get_small_init_inputs()` when the model's
   constructor takes sizes too) — documented in docs/testing.md;
2. KernelBench's module-level size constants (`batch_size = 4096`, `dim = 393216`, `N = 2048`...): the ints
   that `get_inputs()`/`get_init_inputs()` read, directly or through other module-level assignments, are
   scaled down to at most 128 and the module is run again with them (so whatever else derives from them at
   import follows). Powers of two stay powers of two (4096 → 128), a multiple of 32 stays one (393216 → 96),
   and other values keep their remainder mod 32 (4095 → 95), so boundary cases are still exercised;
3. otherwise the full size.
The profile target then checks that the reference accepts the reduced inputs (runs, finite outputs) and falls
back to the full size when it does not; what was run is announced and shown with the result. Standard library
at top level.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import harness_correctness, problem_loader

LIMIT = 128
HOOK = "get_small_inputs"
INIT_HOOK = "get_small_init_inputs"
_READERS = ("get_inputs", "get_init_inputs")


def scaled(value: int) -> int:
    """A size at most LIMIT that keeps the value's alignment (see the module's docstring)."""
    if value <= LIMIT:
        return value
    if value % 32:
        return 64 + value % 32
    while value > LIMIT and value % 2 == 0:
        value //= 2
    return value if value <= LIMIT else 64


def size_constants(tree: ast.Module) -> dict[str, ast.Constant]:
    """Module-level `NAME = <int>` assignments that get_inputs/get_init_inputs depend on, by name."""
    literals: dict[str, ast.Constant] = {}
    derived: dict[str, set[str]] = {}
    wanted: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in _READERS:
            wanted |= _names_read(node)
        elif isinstance(node, ast.Assign):
            value = node.value
            for target in node.targets:
                if not isinstance(target, ast.Name):
                    continue
                if isinstance(value, ast.Constant) and type(value.value) is int:
                    literals[target.id] = value
                else:
                    derived[target.id] = _names_read(value)
    pending = list(wanted)
    while pending:  # through derived assignments: `M = N * 2` makes N a size too
        name = pending.pop()
        for used in derived.get(name, ()):
            if used not in wanted:
                wanted.add(used)
                pending.append(used)
    return {name: const for name, const in literals.items() if name in wanted}


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


@dataclass
class Reduction:
    """Rewrites a reference's source with smaller sizes and remembers what it did."""

    changes: list[tuple[str, int, int]] = field(default_factory=list)  # (name, from, to)
    hook: bool = False  # the reference defines get_small_inputs()

    def __call__(self, path: Path, source: str) -> str:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return source  # loading it reports the error
        if any(isinstance(n, ast.FunctionDef) and n.name == HOOK for n in tree.body):
            self.hook = True
            return source
        edits = []
        for name, const in size_constants(tree).items():
            new = scaled(const.value)
            if new != const.value:
                self.changes.append((name, const.value, new))
                edits.append((const.lineno, const.col_offset, const.end_col_offset, str(new)))
        lines = source.splitlines(keepends=True)
        for line, start, end, text in sorted(edits, reverse=True):
            row = lines[line - 1]
            lines[line - 1] = row[:start] + text + row[end:]
        return "".join(lines)

    def describe(self) -> str:
        if self.hook:
            return f"reduced: the reference's {HOOK}()"
        if self.changes:
            sizes = ", ".join(f"{name} {old}→{new}" for name, old, new in self.changes)
            return f"scaled {sizes} (the reference module run again with these ints)"
        return f"full size: no module-level size constants to scale (add {HOOK}() to the reference)"


def load_small(payload: dict) -> tuple[Any, str, bool]:
    """(problem, what was done, reduced?): the problem with its smallest inputs, as the docstring says."""
    reduction = Reduction()
    problem = problem_loader.load_problem(payload, rewrite=reduction)
    module = problem.reference_module
    if reduction.hook and module is not None:
        init = getattr(module, INIT_HOOK, None)
        if init is not None:
            problem = problem_loader.with_init_inputs(problem, payload, init)
        problem.get_inputs = getattr(module, HOOK)
        return problem, reduction.describe(), True
    return problem, reduction.describe(), bool(reduction.changes)


def accepted(problem: Any, device: Any) -> str | None:
    """None when the reference runs on the problem's inputs and gives finite outputs, else why not."""
    import torch
    try:
        reference = harness_correctness.place(problem.make_reference(), device, None)
        torch.manual_seed(0)
        with torch.no_grad():
            outputs = harness_correctness.flatten(reference(*harness_correctness.make_inputs(problem.get_inputs, device)))
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    except Exception as exc:
        return f"the reference raised: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    for i, out in enumerate(outputs):
        if isinstance(out, torch.Tensor) and out.is_floating_point() and not bool(torch.isfinite(out).all()):
            return f"the reference's output {i} holds NaN/Inf"
    return None
