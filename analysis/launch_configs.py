"""Which configurations each kernel is analysed in — its launches in this file (through the wrappers that call
them with constants), in the other files the launch index knows, and its `cudalens: launch` directives — and
how the findings of several configurations become one list, each finding with the launches it holds for as
related information (attached afresh on every update: launches move independently of the kernel)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import shape_text
from cudalens.analysis.bounded_cache import remember
from cudalens.analysis.file_context import FileContext
from cudalens.analysis.findings import Finding, Related
from cudalens.analysis.host_eval import PartialDim3
from cudalens.analysis.launch_directive import LaunchDirective
from cudalens.analysis.launch_index import LaunchRecord
from cudalens.analysis.launch_sites import LaunchValues, TemplateArg, template_argument
from cudalens.analysis.report import LaunchSite
from cudalens.analysis.unit import Function

if TYPE_CHECKING:
    from cudalens.analysis.model import KernelModel

MAX_CONFIGS = 6  # distinct configurations analysed per kernel (llm.c's dev/cuda files try 6 block sizes)
# Threads simulated over a kernel's configurations: an edit re-analyses the kernel in each of them, so a
# sweep of 32..1024-thread blocks is analysed up to 512 (1.5 times a 1024-thread block; the first is kept).
THREAD_BUDGET = 1536
MAX_RELATED_LAUNCHES = 3


@dataclass(frozen=True)
class KernelConfig:
    """One configuration a kernel is analysed in: what its launches (or a directive) fix, None where not."""

    block: PartialDim3 | None = None
    template: tuple[TemplateArg, ...] = ()  # by position among the kernel's template parameters
    args: tuple[int | None, ...] = ()  # by position among its parameters
    source: str = "none"  # launch | directive | instantiation | none
    where: str = ""  # what gives it, for messages: "its launch", "its launch in main.cu", "the directive"
    tied: tuple[tuple[int, int], ...] = ()  # (block dimension, template parameter) the launch writes alike
    # (block dimension, its expression over the kernel's parameters) the launch computes from its arguments
    block_params: tuple[tuple[int, str], ...] = ()
    # (parameter, the largest value the launch's guard lets it have: `if (C <= 4)` around the launch)
    bounds: tuple[tuple[str, int], ...] = ()

    @property
    def key(self) -> tuple:
        return (self.block, self.template, self.args, self.tied, self.block_params, self.bounds)


_values: dict[tuple, list[list[LaunchValues]]] = {}
_records: dict[tuple, list[LaunchRecord]] = {}
_CACHE_LIMIT = 4096
_configs: dict[tuple, KernelConfig] = {}


def own_records(context: FileContext) -> list[LaunchRecord]:
    """Every launch of this unit, once per configuration its host function's callers give it. The values
    depend only on the text outside kernel bodies (`host_key`): typing in a kernel reuses them."""
    launches = context.unit.launches
    key = (context.host_key, len(launches)) if context.host_key else None
    values = _values.get(key) if key is not None else None
    if values is None:
        values = [context.configurations(launch) for launch in launches]
        if key is not None:
            remember(_values, key, values, 64)
    # the records too, while the launches stand where they stood (an edit inside a kernel moves none of them)
    where = (key, context.path, tuple(launch.node.start_point for launch in launches)) if key is not None else None
    records = _records.get(where) if where is not None else None
    if records is None:
        records = [LaunchRecord(launch.kernel, context.path, context.span(launch.node), v)
                   for launch, vs in zip(launches, values, strict=True) for v in vs]
        if where is not None:
            remember(_records, where, records, 64)
    return records


def launch_config(kernel: Function, values: LaunchValues, where: str) -> KernelConfig:
    """The configuration a launch gives the kernel (remembered: an edit asks again for every launch)."""
    signature = kernel.signature if values.args.count(None) != len(values.args) or values.arg_bounds else ""
    key = (kernel.name, len(kernel.template_params), signature, values, where)
    config = _configs.get(key)
    if config is None:
        config = remember(_configs, key, _launch_config(kernel, values, where), _CACHE_LIMIT)
    return config


def _launch_config(kernel: Function, values: LaunchValues, where: str) -> KernelConfig:
    n = len(kernel.template_params)
    template = (values.template_args + (None,) * n)[:n]
    # (the parameters are read only when an argument is known: most launches pass run-time sizes)
    args = () if values.args.count(None) == len(values.args) else \
        tuple(None if p.pointer or i >= len(values.args) else values.args[i] for i, p in enumerate(kernel.params))
    names = [p.name for p in kernel.params]
    block_params = tuple((d, re.sub(r"\$(\d+)", lambda m: names[int(m.group(1))], e)) for d, e in values.block_from_args
                         if all(int(i) < len(names) for i in re.findall(r"\$(\d+)", e)))
    bounds = tuple((names[i], b) for i, b in values.arg_bounds if i < len(names) and not kernel.params[i].pointer)
    return KernelConfig(values.block_dims, template, args, "launch", where,
                        tuple((d, j) for d, j in values.block_from_template if j < n), block_params, bounds)


def directive_config(kernel: Function, directive: LaunchDirective) -> KernelConfig:
    values = dict(directive.values)
    template = tuple(values.get(name) for name in kernel.template_params)
    args = tuple(None if p.pointer or not isinstance(values.get(p.name), int) else values.get(p.name)
                 for p in kernel.params)
    return KernelConfig(directive.block, template, args, "directive",  # type: ignore[arg-type]
                        f"the `cudalens: launch` directive on line {directive.line}")


_NOT_A_DECLARATION = re.compile(rb"template\s*<")


def instantiations(context: FileContext) -> dict[str, list[KernelConfig]]:
    """Explicit instantiations, `template __global__ void k<64, float>(float*);`: the template arguments of a
    kernel launched elsewhere (its block stays open)."""
    out: dict[str, list[KernelConfig]] = {}
    root = context.unit.tree.root_node
    source = context.unit.source
    at = source.find(b"template")
    while at >= 0:  # a text search (`template` not followed by `<`), then the node there
        here, at = at, source.find(b"template", at + 8)
        if _NOT_A_DECLARATION.match(source, here):
            continue
        node = root.descendant_for_byte_range(here, here)
        while node is not None and node.type != "template_instantiation":
            node = node.parent
        if node is None:
            continue
        declarator = node.child_by_field_name("declarator")
        func = declarator.child_by_field_name("declarator") if declarator is not None else None
        if func is None or func.type != "template_function":
            continue
        name = func.child_by_field_name("name")
        targs = func.child_by_field_name("arguments")
        args = tuple(template_argument(a, context.unit, None, {}) for a in ts.arguments(targs))
        out.setdefault(ts.text(name) if name is not None else "", []).append(KernelConfig(
            None, args, (), "instantiation", f"the instantiation on line {context.span(node).line}"))
    return out


def kernel_configs(kernel: Function, launches: list[KernelConfig],
                   directives: list[LaunchDirective]) -> list[KernelConfig]:
    """The distinct configurations (by block, template arguments and integer arguments) of the kernel's
    directives and launches (each made by `launch_config`), within MAX_CONFIGS and THREAD_BUDGET; one that
    fixes nothing when there is neither launch nor directive."""
    found: dict[tuple, KernelConfig] = {}
    for config in [directive_config(kernel, d) for d in directives] + launches:
        found.setdefault(config.key, config)
    chosen: list[KernelConfig] = []
    budget = THREAD_BUDGET
    for config in found.values():
        threads = _threads(config.block)
        if chosen and (len(chosen) >= MAX_CONFIGS or threads > budget):
            continue
        chosen.append(config)
        budget -= threads
    return chosen or [KernelConfig()]


def _threads(block: PartialDim3 | None) -> int:
    count = 1
    for d in block or (256,):
        count *= d or 8
    return count


def launch_where(record: LaunchRecord, path: str) -> str:
    return "its launch" if record.path == path else f"its launch in {record.path}"


def merge(per_model: list[list[Finding]], models: list[KernelModel]) -> tuple[list[Finding], list[tuple[int, ...]]]:
    """One finding per code and place: the most severe of the configurations' (a finding proven for one
    launch is proven), with the configurations it holds for; when their blocks differ, the message says for
    which blocks it holds."""
    if len(per_model) == 1:
        return per_model[0], [(0,)] * len(per_model[0])
    groups: dict[tuple, list[tuple[int, Finding]]] = {}
    for i, findings in enumerate(per_model):
        for f in findings:
            groups.setdefault((f.code, f.path, f.span), []).append((i, f))
    shapes = [shape_text(m.configs[0].block) for m in models]
    out, owners = [], []
    for entries in groups.values():
        rank = max(f.severity.rank for _, f in entries)
        chosen = [(i, f) for i, f in entries if f.severity.rank == rank]
        finding = chosen[0][1]
        holding = tuple(i for i, _ in chosen)
        with_ = list(dict.fromkeys(shapes[i] for i in holding))
        without = [s for s in dict.fromkeys(shapes) if s not in with_]
        if without:
            finding = replace(finding, message=f"{finding.message} (with block {_some(with_, ' and ')}; not with "
                                               f"{_some(without, ' or ')})")
        out.append(finding)
        owners.append(holding)
    return out, owners


def _some(shapes: list[str], joiner: str, limit: int = 3) -> str:
    return joiner.join(shapes[:limit]) + (f" ({len(shapes) - limit} more)" if len(shapes) > limit else "")


class KernelLaunches:
    """The launches of the kernels of one name, read once per analysis: same-named definitions (overloads, or
    a file made of copies of one kernel) share them — each reading every site of its name made a file of n
    copies cost n² (19 s and 10 GB for a few thousand copies)."""

    def __init__(self, records: list[LaunchRecord], path: str) -> None:
        self.records = records
        self.path = path
        self.sites = tuple(LaunchSite(r.span, r.values.grid, r.values.block, r.values.dynamic_shared_bytes,
                                      None if r.path == path else r.path) for r in records)
        self._by_signature: dict[tuple, LaunchedAs] = {}

    def of(self, kernel: Function) -> LaunchedAs:
        """The configurations the launches give a kernel of this name (by its signature: overloads differ)."""
        key = (len(kernel.template_params), kernel.signature)
        found = self._by_signature.get(key)
        if found is None:
            made = [(r, launch_config(kernel, r.values, launch_where(r, self.path))) for r in self.records]
            found = self._by_signature[key] = LaunchedAs(made)
        return found


class LaunchedAs:
    """Each launch with the configuration it gives, grouped by configuration (for related information)."""

    def __init__(self, made: list[tuple[LaunchRecord, KernelConfig]]) -> None:
        self.made = made
        self.configs = [c for _, c in made]
        self.by_key: dict[tuple, list[LaunchRecord]] = {}
        for record, config in made:
            self.by_key.setdefault(config.key, []).append(record)
        self._chosen: list[KernelConfig] | None = None

    def chosen(self, kernel: Function) -> list[KernelConfig]:
        """kernel_configs of these launches alone (no directive), made once."""
        if self._chosen is None:
            self._chosen = kernel_configs(kernel, self.configs, [])
        return self._chosen


def with_launches(findings: list[Finding], owners: list[tuple[int, ...]], configs: list[KernelConfig],
                  launches: LaunchedAs) -> list[Finding]:
    """The findings with the launches of their configurations as related information."""
    by_key = launches.by_key
    out = []
    for finding, holding in zip(findings, owners, strict=True):
        records = [r for i in holding for r in by_key.get(configs[i].key, [])][:MAX_RELATED_LAUNCHES]
        if records:
            finding = replace(finding, related=finding.related + tuple(
                Related(r.span, _launched(r), None if r.path == finding.path else r.path) for r in records))
        out.append(finding)
    return out


def _launched(record: LaunchRecord) -> str:
    dims = record.values.block_dims
    block = "" if dims is None else " with block " + "×".join("?" if d is None else str(d) for d in dims)
    via = f", through {record.values.via}" if record.values.via else ""
    return f"`{record.kernel}` is launched here{block}{via}"
