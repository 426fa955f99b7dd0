"""One translation unit as the rules see it: where its nodes are in the user's file (also for CUDA embedded in
Python), how to make findings and fixes there, and the constant launch configurations of its `<<<...>>>`
sites. File-level rules (host code, launch sites) get this; each kernel's model builds on it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.findings import Finding, Fix, Related, Severity, Span, TextEdit
from cudalens.analysis.launch_sites import CallGraph, LaunchValues, bound_configurations, launch_values
from cudalens.analysis.positions import LineIndex
from cudalens.analysis.unit import Function, Launch, Unit

if TYPE_CHECKING:
    from cudalens.analysis.assumptions import Premises

Node = ts.Node
PositionMap = Callable[[int, int], tuple[int, int]]
Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class HeaderText:
    """An `#include`d header the unit reads: nodes of its tree are placed in its own file."""

    path: str
    root: Node
    index: LineIndex


@dataclass
class FileContext:
    path: str
    unit: Unit
    index: LineIndex
    to_file: PositionMap | None
    headers: tuple[HeaderText, ...] = ()
    host_key: str = ""  # a digest of the text outside kernel bodies: launch values computed under it are reused
    premises: Premises | None = None  # what the kernel's analysis assumed (None: host code, helpers)

    def with_premises(self, premises: Premises) -> FileContext:
        return replace(self, premises=premises)

    def place(self, node: Node) -> tuple[str, Span]:
        """The file that holds `node` and its span there: a node of an included header (a helper's branch, a
        shared array declared there) lands in the header, never on an unrelated line of this file."""
        if self.headers:
            root = _root(node)
            if root != self.unit.tree.root_node:
                header = next((h for h in self.headers if h.root == root), None)
                if header is not None:
                    return header.path, header.index.span(node)
        return self.path, self.span(node)

    def span(self, node: Node) -> Span:
        s = self.index.span(node)
        if self.to_file is None:
            return s
        line, col = self.to_file(s.line, s.column)
        end_line, end_col = self.to_file(s.end_line, s.end_column)
        return Span(line, col, end_line, end_col)

    def finding(self, rule: type, node: Node, message: str, severity: Severity | None = None, *,
                kernel: str | None = None, fix: Fix | None = None, evidence: dict | None = None,
                related: tuple[tuple[Node, str], ...] = (), holds: Sequence[bool] | None = None,
                stated: Sequence[object] = ()) -> Finding:
        """Every finding is made here, so every one goes through what the kernel's analysis assumed
        (assumptions.Premises.judge): `holds` says whether the conclusion held in each run of the model,
        `stated` the figures its message states as each run found them."""
        severity = severity or rule.default_severity
        evidence = evidence or {}
        if self.premises is not None:
            severity, message, evidence = self.premises.judge(rule.depends_on, severity, message, evidence, node,
                                                              holds, stated)
        path, span = self.place(node)
        places = [(n, m, self.place(n)) for n, m in related if n is not None]
        return Finding(
            path=path,
            code=rule.code,
            rule=rule.name,
            severity=severity,
            message=message,
            span=span,
            kernel=kernel,
            fix=fix,
            evidence=tuple(evidence.items()),
            related=tuple(Related(where, m, None if at == path else at) for _, m, (at, where) in places),
        )

    def replace_fix(self, node: Node, new_text: str, message: str, safe: bool) -> Fix:
        return Fix(message, (TextEdit(self.span(node), new_text),), "safe" if safe else "unsafe")

    def kernel(self, name: str) -> Function | None:
        """The `__global__` function of that name defined in this unit, if any."""
        kernels = [f for f in self.unit.functions.get(name, []) if f.is_kernel]
        return next((f for f in kernels if f.body is not None), kernels[0] if kernels else None)

    @cached_property
    def _host_texts(self) -> dict[Node | None, str]:
        texts: dict[Node | None, str] = {None: ""}
        for launch in self.unit.launches:
            if launch.host_function not in texts:
                texts[launch.host_function] = ts.text(launch.host_function)
        return texts

    def host_text(self, launch: Launch) -> str:
        """The text of the launch's host function, read once per function: reading it per launch made a host
        function with n launches cost n²."""
        return self._host_texts[launch.host_function]

    @cached_property
    def _launches(self) -> list[tuple[Launch, LaunchValues]]:
        return [(launch, launch_values(launch, self.unit, self.host_text(launch))) for launch in self.unit.launches]

    def launches(self) -> list[tuple[Launch, LaunchValues]]:
        """Every launch site with its constant values (evaluated once per context, shared by the rules)."""
        return self._launches

    @cached_property
    def _by_kernel(self) -> dict[str, list[tuple[Launch, LaunchValues]]]:
        out: dict[str, list[tuple[Launch, LaunchValues]]] = {}
        for launch, values in self._launches:
            out.setdefault(launch.kernel, []).append((launch, values))
        return out

    def launches_of(self, kernel: str) -> list[tuple[Launch, LaunchValues]]:
        return self._by_kernel.get(kernel, [])

    @cached_property
    def _call_graph(self) -> CallGraph:
        return CallGraph(self.unit, host_functions(self.unit, own=False))

    def configurations(self, launch: Launch) -> list[LaunchValues]:
        """The launch's values, once for each call of its host function that fixes more of them."""
        return bound_configurations(launch, self.unit, lambda: self._call_graph, self.host_key,
                                    self.host_text(launch))


def host_functions(unit: Unit, own: bool = True) -> list[Function]:
    """Functions with a body that run on the host: neither `__global__` nor `__device__`; with `own`, only
    those of this file (not of the headers it includes, whose positions are in another text)."""
    root = unit.tree.root_node
    return [f for fs in unit.functions.values() for f in fs
            if not f.is_kernel and not f.is_device and f.body is not None and (not own or _root(f.node) == root)]


def device_functions(unit: Unit) -> list[Function]:
    """This file's `__device__` helpers with a body (kernels have their own per-kernel checks)."""
    root = unit.tree.root_node
    return [f for fs in unit.functions.values() for f in fs
            if f.is_device and not f.is_kernel and f.body is not None and _root(f.node) == root]


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node
