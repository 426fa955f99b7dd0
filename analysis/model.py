"""The kernel model: for each `__global__` function, its launch configuration (from `<<<...>>>` sites, `dim3`
variables, `__launch_bounds__`), the warp shape that follows, and the lane interpreter's runs over one block —
one run per plausible block shape and parameter sample, so a rule can tell what holds in all of them (proven)
from what holds in some (it depends: `info`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.file_context import FileContext, KernelLaunches, PositionMap
from cudalens.analysis.findings import Finding, Fix, Severity, Span
from cudalens.analysis.host_eval import eval_host
from cudalens.analysis.positions import LineIndex
from cudalens.analysis.simulate import SimResult, Simulator
from cudalens.analysis.unit import Function, Unit

Node = ts.Node
# Integer parameters are sampled twice: conclusions that change between samples depend on run-time values.
PARAM_SAMPLES = (4096, 4352)
ASSUMED_1D_BLOCK = (256, 1, 1)
ASSUMED_2D_BLOCKS = ((32, 8, 1), (16, 16, 1))


@dataclass(frozen=True)
class RunConfig:
    block: tuple[int, int, int]
    param_sample: int
    label: str


@dataclass
class KernelModel:
    path: str
    unit: Unit
    function: Function
    index: LineIndex
    to_file: PositionMap | None
    block: tuple[int, int, int] | None  # known from every launch site / launch bounds, else None
    block_source: str  # "launch", "launch_bounds", "assumed"
    launch_sites: list[tuple[Node, tuple[int, int, int] | None, tuple[int, int, int] | None, int | None]]
    configs: list[RunConfig] = field(default_factory=list)
    runs: list[SimResult] = field(default_factory=list)
    dimension_params: set[str] = field(default_factory=set)
    uses_tid_yz: bool = False
    template_values: dict[str, int] = field(default_factory=dict)
    template_types: dict[str, str] = field(default_factory=dict)  # `T` → `float` from `k<float><<<...>>>`

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def primary(self) -> SimResult:
        return self.runs[0]

    def text(self, node: Node) -> str:
        return ts.text(node)

    @property
    def context(self) -> FileContext:
        return FileContext(self.path, self.unit, self.index, self.to_file)

    def span(self, node: Node) -> Span:
        return self.context.span(node)

    def finding(self, rule: type, node: Node, message: str, severity: Severity | None = None, *,
                fix: Fix | None = None, evidence: dict | None = None,
                related: tuple[tuple[Node, str], ...] = ()) -> Finding:
        return self.context.finding(rule, node, message, severity, kernel=self.name, fix=fix, evidence=evidence,
                                    related=related)

    def replace_fix(self, node: Node, new_text: str, message: str, safe: bool) -> Fix:
        return self.context.replace_fix(node, new_text, message, safe)

    def simulate(self, cfg: RunConfig, pad: dict[str, int] | None = None) -> SimResult:
        int_params = [p.name for p in self.function.params if not p.pointer]
        return Simulator(self.unit, self.function, cfg.block, {p: cfg.param_sample for p in int_params},
                         self.template_values, pad=pad, template_types=self.template_types).run()

    def block_assumed(self) -> bool:
        return self.block_source == "assumed"


_TID_YZ = re.compile(r"threadIdx\s*\.\s*[yz]")
_COMPARED_LEFT = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<=|>=|<|>)(?![<>=])")
_COMPARED_RIGHT = re.compile(r"(?<![<>])(?:<=|>=|<|>)\s*([A-Za-z_]\w*)\b")


_STRIDE_LIKE = re.compile(r"stride|step|inc|offset|shift|skip|spacing|dilation", re.I)


def _dimension_params(function: Function) -> set[str]:
    """Integer parameters that are sizes of the data, never 1 in practice: compared in conditions
    (`if (x < width)`), or multiplied into an index as a row length (`x * height`) — unless the name says it
    is a stride the caller chooses (`stride`, `step`, `inc`...), which may well be 1."""
    names = {p.name for p in function.params if not p.pointer}
    body = ts.text(function.body) if function.body is not None else ""
    found: set[str] = set()
    for pattern in (_COMPARED_LEFT, _COMPARED_RIGHT):
        found |= {m.group(1) for m in pattern.finditer(body) if m.group(1) in names}
    for name in names - found:
        if not _STRIDE_LIKE.search(name) and re.search(rf"\*\s*{re.escape(name)}\b|\b{re.escape(name)}\s*\*", body):
            found.add(name)
    return found


def build_models(path: str, unit: Unit, index: LineIndex, to_file: PositionMap | None) -> list[KernelModel]:
    context = FileContext(path, unit, index, to_file)
    return [build_model(path, unit, kernel, index, to_file, context.kernel_launches(kernel.name))
            for kernel in unit.kernels if kernel.body is not None]


LaunchConfig = tuple[Node, "tuple[int, int, int] | None", "tuple[int, int, int] | None", "int | None"]


def build_model(path: str, unit: Unit, kernel: Function, index: LineIndex,
                to_file: PositionMap | None, launches: KernelLaunches) -> KernelModel:
    sites = launches.configs
    template_values = launches.template_values(tuple(kernel.template_params))
    template_types = launches.template_types(tuple(kernel.template_params))
    blocks = launches.blocks
    uses_yz = bool(_TID_YZ.search(ts.text(kernel.body)))
    if len(blocks) == 1 and launches.all_blocks_known:
        block, source, candidates = blocks[0], "launch", [blocks[0]]
    else:
        bound = eval_host(kernel.launch_bounds[0], unit, None) if kernel.launch_bounds else None
        if bound is not None and not uses_yz:
            block, source, candidates = (bound[0], 1, 1), "launch_bounds", [(bound[0], 1, 1)]
        else:
            block, source = None, "assumed"
            candidates = list(ASSUMED_2D_BLOCKS) if uses_yz else [ASSUMED_1D_BLOCK]
            candidates = list(blocks) if blocks else candidates
    model = KernelModel(path, unit, kernel, index, to_file, block, source, sites,
                        dimension_params=_dimension_params(kernel), uses_tid_yz=uses_yz)
    has_int_params = any(not p.pointer for p in kernel.params)
    configs = [RunConfig(b, PARAM_SAMPLES[0], f"block {b[0]}×{b[1]}×{b[2]}") for b in candidates]
    if has_int_params:
        configs.append(RunConfig(candidates[0], PARAM_SAMPLES[1], "other sizes"))
    model.template_values, model.template_types = template_values, template_types
    for cfg in configs:
        model.configs.append(cfg)
        model.runs.append(model.simulate(cfg))
    return model


SiteKey = tuple[int, int]


def sites(model: KernelModel, events: str | Callable[[SimResult], list],
          keep: Callable[[object], bool] = lambda e: True) -> dict[SiteKey, list[list]]:
    """Events grouped by source site, one list per run. `events` names a list of the runs ("accesses",
    "branches", "barriers") or derives one from a run."""
    grouped: dict[SiteKey, list[list]] = {}
    for i, run in enumerate(model.runs):
        for event in (getattr(run, events) if isinstance(events, str) else events(run)):
            if not keep(event):
                continue
            key = (event.node.start_byte, event.node.end_byte)
            grouped.setdefault(key, [[] for _ in model.runs])[i].append(event)
    return grouped


def statement_cost(node: Node | None) -> int:
    """A rough count of the work under a statement: statements, with loops weighing more."""
    if node is None:
        return 0
    cost = 0
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("expression_statement", "declaration", "return_statement"):
            cost += 1
        elif n.type in ("for_statement", "while_statement", "do_statement"):
            cost += 5
        stack.extend(n.named_children)
    return cost


# what a finding says when the addresses it judged follow loaded data (Simulator.forget_assigned)
FOLLOWS_DATA = "the index follows loaded data: this is one outcome the data can give, not all"


def describe_deps(deps: frozenset[str]) -> str:
    names = []
    for d, label in (("tid.x", "threadIdx.x"), ("tid.y", "threadIdx.y"), ("tid.z", "threadIdx.z")):
        if d in deps:
            names.append(label)
    names += sorted(f"`{d.split(':', 1)[1]}`" for d in deps if d.startswith("param:"))
    return ", ".join(names) or "thread-independent values"
