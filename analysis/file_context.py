"""One translation unit as the rules see it: where its nodes are in the user's file (also for CUDA embedded in
Python), how to make findings and fixes there, and the constant launch configurations of its `<<<...>>>`
sites. File-level rules (host code, launch sites) get this; each kernel's model builds on it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.api import LaunchSite
from cudalens.analysis.findings import Finding, Fix, Related, Severity, Span, TextEdit
from cudalens.analysis.host_eval import dim3, eval_host
from cudalens.analysis.positions import LineIndex
from cudalens.analysis.unit import Function, Launch, Unit

Node = ts.Node
PositionMap = Callable[[int, int], tuple[int, int]]
Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class LaunchValues:
    """The values of a `<<<grid, block, smem, stream>>>` that are constant (None where they are not)."""

    grid: Dim3 | None
    block: Dim3 | None
    dynamic_shared_bytes: int | None


_CACHE_LIMIT = 4096
_cache: dict[tuple, LaunchValues] = {}


def launch_values(launch: Launch, unit: Unit, host_text: str) -> LaunchValues:
    """The launch's constant values. They depend only on its host function's text (`host_text`, read once per
    host function by the caller) and the unit's macros and constants, so they are remembered across edits:
    evaluating every launch of a 3,000-line file on every keystroke cost ~70 ms."""
    key = (host_text, ts.text(launch.node), unit.definitions_key)
    values = _cache.get(key)
    if values is None:
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        values = _cache[key] = _evaluate_launch(launch, unit)
    return values


def _evaluate_launch(launch: Launch, unit: Unit) -> LaunchValues:
    cfg, scope = launch.config, launch.host_function

    def constant(node: Node) -> bool:
        return scope is None or not any(_reassigned(name, scope) for name in _IDENT.findall(ts.text(node)))

    def shape(node: Node) -> Dim3 | None:
        value = dim3(node, unit, scope) if constant(node) else None
        return value if value is not None and min(value) > 0 else None  # 0 is a placeholder, not a launch

    smem = eval_host(cfg[2], unit, scope) if len(cfg) > 2 and constant(cfg[2]) else None
    return LaunchValues(
        grid=shape(cfg[0]) if len(cfg) > 0 else None,
        block=shape(cfg[1]) if len(cfg) > 1 else None,
        dynamic_shared_bytes=smem[0] if smem and smem[0] >= 0 else None,
    )


_IDENT = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=64)
def _reassigned(name: str, scope: Node) -> bool:
    """Whether `name` (or a field of it, `block.x`) is assigned in `scope` other than by its initializer, or
    its address is taken (`cudaOccupancyMaxPotentialBlockSize(&grid, &block, k)`): then its declared value is
    not the one every launch sees (`threads = n < 256 ? 64 : 256;`). Remembered per name and host function:
    the launches of one host function mostly name the same `grid` and `block`."""
    text = scope.text or b""
    if re.search(rb"&\s*" + name.encode() + rb"\b", text):
        return True
    pattern = re.compile(rb"(?:\+\+|--)\s*" + name.encode() + rb"\b|\b" + name.encode()
                         + rb"\s*(?:\.\s*[xyz]\s*)?(?:[-+*/%&|^]|<<|>>)?=(?!=)|\b" + name.encode() + rb"\s*(?:\+\+|--)")
    for m in pattern.finditer(text):
        node = scope.descendant_for_byte_range(scope.start_byte + m.start(), scope.start_byte + m.start())
        while node is not None and node != scope and node.type not in (
                "init_declarator", "assignment_expression", "update_expression"):
            node = node.parent
        if node is not None and node.type in ("assignment_expression", "update_expression"):
            return True
    return False


@dataclass
class FileContext:
    path: str
    unit: Unit
    index: LineIndex
    to_file: PositionMap | None

    def span(self, node: Node) -> Span:
        s = self.index.span(node)
        if self.to_file is None:
            return s
        line, col = self.to_file(s.line, s.column)
        end_line, end_col = self.to_file(s.end_line, s.end_column)
        return Span(line, col, end_line, end_col)

    def finding(self, rule: type, node: Node, message: str, severity: Severity | None = None, *,
                kernel: str | None = None, fix: Fix | None = None, evidence: dict | None = None,
                related: tuple[tuple[Node, str], ...] = ()) -> Finding:
        return Finding(
            path=self.path,
            code=rule.code,
            rule=rule.name,
            severity=severity or rule.default_severity,
            message=message,
            span=self.span(node),
            kernel=kernel,
            fix=fix,
            evidence=tuple((evidence or {}).items()),
            related=tuple(Related(self.span(n), m) for n, m in related if n is not None),
        )

    def replace_fix(self, node: Node, new_text: str, message: str, safe: bool) -> Fix:
        return Fix(message, (TextEdit(self.span(node), new_text),), "safe" if safe else "unsafe")

    def kernel(self, name: str) -> Function | None:
        """The `__global__` function of that name defined in this unit, if any."""
        kernels = [f for f in self.unit.functions.get(name, []) if f.is_kernel]
        return next((f for f in kernels if f.body is not None), kernels[0] if kernels else None)

    @cached_property
    def _launches(self) -> list[tuple[Launch, LaunchValues]]:
        host_texts: dict[Node | None, str] = {None: ""}
        for launch in self.unit.launches:
            if launch.host_function not in host_texts:
                host_texts[launch.host_function] = ts.text(launch.host_function)
        return [(launch, launch_values(launch, self.unit, host_texts[launch.host_function]))
                for launch in self.unit.launches]

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
    def _kernel_launches(self) -> dict[str, KernelLaunches]:
        return {}

    def kernel_launches(self, kernel: str) -> KernelLaunches:
        """What the launch sites of the kernels named `kernel` say, read once per context."""
        found = self._kernel_launches.get(kernel)
        if found is None:
            found = self._kernel_launches[kernel] = KernelLaunches(self, kernel)
        return found


class KernelLaunches:
    """The launch sites of the kernels of one name. Same-named definitions (overloads, or a file made of copies
    of one kernel) share them: each re-reading every site made a file of n copies cost n² (19 s and 10 GB for a
    few thousand copies)."""

    def __init__(self, context: FileContext, kernel: str) -> None:
        self.unit = context.unit
        self.launches = context.launches_of(kernel)
        self.sites = tuple(LaunchSite(context.span(launch.node), v.grid, v.block, v.dynamic_shared_bytes)
                           for launch, v in self.launches)
        self.blocks = tuple(sorted({v.block for _, v in self.launches if v.block is not None}))
        self.all_blocks_known = all(v.block is not None for _, v in self.launches)
        # (call node, grid, block, dynamic shared bytes) of each site, None where not constant
        self.configs = [(launch.node, v.grid, v.block, v.dynamic_shared_bytes) for launch, v in self.launches]
        self._template_values: dict[tuple[str, ...], dict[str, int]] = {}

    def template_values(self, params: tuple[str, ...]) -> dict[str, int]:
        """The first constant each template parameter gets at a site; 32 for those that get none."""
        values = self._template_values.get(params)
        if values is None:
            values = {}
            for launch, _ in self.launches:
                for name, arg in zip(params, launch.template_args, strict=False):
                    value = eval_host(arg, self.unit, launch.host_function) if name not in values else None
                    if value is not None:
                        values[name] = value[0]
            for name in params:
                values.setdefault(name, 32)
            self._template_values[params] = values
        return dict(values)

    def template_types(self, params: tuple[str, ...]) -> dict[str, str]:
        """The first type each template parameter gets at a site whose size the unit knows (`k<float>`)."""
        types: dict[str, str] = {}
        for launch, _ in self.launches:
            for name, arg in zip(params, launch.template_args, strict=False):
                if name not in types and arg.type == "type_descriptor" and self.unit.types.lookup(ts.text(arg)):
                    types[name] = ts.text(arg)
        return types


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
