"""The kernel model: for each `__global__` function and each configuration it is launched in (from `<<<...>>>`
sites anywhere the analyzer sees, a `// cudalens: launch` directive, `__launch_bounds__`), the block shape,
template arguments and sizes that configuration fixes, the warp shape that follows, and the lane interpreter's
runs over one block. What the configuration leaves open is assumed, and the runs try other plausible values of
it (another block shape, other sizes), so a rule can tell what holds in all of them from what holds in some;
`Premises` (assumptions.py) records what was assumed, for the findings."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import Assumption, Fact, Premises, block_phrase, shape_text
from cudalens.analysis.file_context import FileContext, PositionMap
from cudalens.analysis.findings import Finding, Fix, Severity, Span
from cudalens.analysis.host_eval import PartialDim3, eval_host
from cudalens.analysis.launch_configs import KernelConfig, kernel_configs, launch_config
from cudalens.analysis.positions import LineIndex
from cudalens.analysis.simulate import SimResult, Simulator
from cudalens.analysis.types import FLOAT_TYPES, substitute
from cudalens.analysis.unit import Function, Unit, template_parameters

Node = ts.Node
# Integer parameters no launch fixes are sampled twice: conclusions that change between samples depend on them.
PARAM_SAMPLES = (4096, 4352)
# ... except an exponent (`1 << log2N`): the size it makes is then 4096 and 2048 (`1 << 4096` is no size at all)
SHIFT_SAMPLES = (12, 11)
# ... and once more under a warp where the size's role makes that matter (SimResult.warp_sized: a mask of thread
# indices, a comparison with the warp's width): `pos = 2 * tid - (tid & (size - 1))` folds the lanes onto every
# other word only once `size` < 32. 4 keeps such a mask and a quarter of the size (a scan over `uint4`) nonzero,
# and keeps the loops the size bounds short; an exponent gets 2 (1 << 2 = 4).
SMALL_SAMPLE, SMALL_SHIFT = 4, 2
OFF_DIAGONAL = (2, 1, 1)  # the block index of the runs with other sizes (RunConfig.block_index)
ASSUMED_TEMPLATE_INT = 32
ASSUMED_TEMPLATE_TYPE = "float"


@dataclass(frozen=True)
class RunConfig:
    block: tuple[int, int, int]
    param_sample: int
    label: str
    params: tuple[tuple[str, int], ...] = ()  # each integer parameter's value in this run
    varies: frozenset[Fact] = frozenset()  # what this run gives other values than the first run
    # the block that stands for the grid: the first run's is on the diagonal (blockIdx.x == blockIdx.y), the
    # runs with other sizes take one off it, so that a split that only a diagonal block shows (`row <= col`
    # of a triangular matmul) holds in one run, not in all
    block_index: tuple[int, int, int] = (1, 1, 1)


@dataclass
class KernelModel:
    path: str
    unit: Unit
    function: Function
    index: LineIndex
    to_file: PositionMap | None
    block: tuple[int, int, int] | None  # known from the launch / directive / launch bounds, else None
    block_source: str  # "launch", "directive", "launch_bounds", "assumed"
    context: FileContext
    configs: list[RunConfig] = field(default_factory=list)
    runs: list[SimResult] = field(default_factory=list)
    # integer parameters that are data sizes (never 1 in practice), and those whose value the launch gives
    dimension_params: set[str] = field(default_factory=set)
    template_values: dict[str, int] = field(default_factory=dict)
    template_types: dict[str, str] = field(default_factory=dict)  # `T` → `float`: given, or assumed
    # the run with the warp-sized parameters under a warp (small_size_config), simulated when a rule asks for it
    small_config: RunConfig | None = None
    _small_run: SimResult | None = None

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def primary(self) -> SimResult:
        return self.runs[0]

    def text(self, node: Node) -> str:
        return ts.text(node)

    def span(self, node: Node) -> Span:
        return self.context.span(node)

    def finding(self, rule: type, node: Node, message: str, severity: Severity | None = None, *,
                fix: Fix | None = None, evidence: dict | None = None,
                related: tuple[tuple[Node, str], ...] = (), holds: Sequence[bool] | None = None,
                stated: Sequence[object] = ()) -> Finding:
        """`holds`: whether the conclusion held in each of `runs`; `stated`: the figures the message states, as
        each of `runs` found them (see assumptions.Premises.judge)."""
        return self.context.finding(rule, node, message, severity, kernel=self.name, fix=fix, evidence=evidence,
                                    related=related, holds=holds, stated=stated)

    def replace_fix(self, node: Node, new_text: str, message: str, safe: bool) -> Fix:
        return self.context.replace_fix(node, new_text, message, safe)

    def simulate(self, cfg: RunConfig, pad: dict[str, int] | None = None) -> SimResult:
        return Simulator(self.unit, self.function, cfg.block, dict(cfg.params), self.template_values, pad=pad,
                         template_types=self.template_types, block_index=cfg.block_index,
                         host_key=self.context.host_key).run()

    def small_size_run(self) -> SimResult | None:
        """The run with the sizes whose role calls for it under a warp (`small_config`), or None when no sampled
        size has such a role. It is not one of `runs`: a rule asks for it where a size under a warp can show
        what the sampled sizes cannot, and a finding from it holds in it alone (`holds` one longer than
        `runs`, its last entry this run's), which names the small size it rests on."""
        if self.small_config is None:
            return None
        if self._small_run is None:
            self._small_run = self.simulate(self.small_config)
        return self._small_run

    def block_assumed(self) -> bool:
        return self.block_source == "assumed"

    def site_params(self, node: object) -> set[str]:
        """The integer parameters the values at `node` depend on, in the first run."""
        return site_params(self.runs, node)


def site_params(runs: list[SimResult], node: object) -> set[str]:
    """The integer parameters the values at `node` depend on, in the first of `runs`."""
    if not isinstance(node, Node) or not runs:
        return set()
    key = (node.start_byte, node.end_byte)
    run = runs[0]
    events = [*run.accesses, *run.branches]
    return {d.split(":", 1)[1] for e in events if (e.node.start_byte, e.node.end_byte) == key
            for d in e.deps if d.startswith("param:")}


_USES_Y = re.compile(r"(?:threadIdx|blockDim)\s*\.\s*y")
_USES_Z = re.compile(r"(?:threadIdx|blockDim)\s*\.\s*z")
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
    multiplied = {a or b for a, b in _MULTIPLIED.findall(body)} if names - found else set()
    return found | {name for name in names - found if name in multiplied and not _STRIDE_LIKE.search(name)}


# a name right after or before a `*` (lookaheads: `a * b * c` multiplies all three)
_MULTIPLIED = re.compile(r"(?=\*\s*([A-Za-z_]\w*)\b)|(?=\b([A-Za-z_]\w*)\s*\*)")


def build_models(path: str, unit: Unit, index: LineIndex, to_file: PositionMap | None) -> list[KernelModel]:
    """Each kernel's model in its first configuration (the launches of this unit only)."""
    context = FileContext(path, unit, index, to_file)
    models = []
    for kernel in unit.kernels:
        if kernel.body is None:
            continue
        launches = [launch_config(kernel, v, "its launch") for _, v in context.launches_of(kernel.name)]
        models.append(build_model(context, kernel, kernel_configs(kernel, launches, [])[0]))
    return models


_ASSERTED_EQUAL = re.compile(r"\b([A-Za-z_]\w*)\s*==\s*(\d+)\b(?!\s*[-+*/%<>])|\b(\d+)\s*==\s*([A-Za-z_]\w*)\b(?!\s*[.(\[])")


def asserted_values(function: Function) -> dict[str, int]:
    """What a `static_assert(N == 128, …)` in the kernel fixes: the compiler rejects every other instantiation,
    so N is 128, not an assumption."""
    out: dict[str, int] = {}
    body = function.body
    for node in ts.captures("cuda", "syntax_static_assert", body).get("static_assert", []) if body is not None \
            else []:
        condition = node.child_by_field_name("condition")
        text = ts.text(condition) if condition is not None else ""
        if "||" in text or "!" in text.replace("!=", ""):
            continue
        for name, value, value_first, name_after in _ASSERTED_EQUAL.findall(text):
            out.setdefault(name or name_after, int(value or value_first))
    return out


def template_kinds(function: Function) -> list[bool]:
    """For each template parameter of the function (in order): whether it is a type."""
    return [kind == "type" for kind, _ in template_parameters(function.node)]


def _plausible_blocks(known: PartialDim3 | None, uses_y: bool, uses_z: bool, bound: int | None
                      ) -> tuple[list[tuple[int, int, int]], list[str]]:
    """The block of the first run and of a second one trying other values, filling what `known` leaves open
    with plausible sizes; and what was filled: ["block"] for the whole shape, else the dimensions ("y")."""
    parts = list(known) if known is not None else [None, None, None]
    for i, used in ((1, uses_y), (2, uses_z)):
        if parts[i] is None and not used:
            parts[i] = 1  # a dimension the kernel never reads
    if parts[0] is None and bound is not None and parts[1:] == [1, 1]:
        parts[0] = bound  # the `__launch_bounds__` of a one-dimensional kernel is its block
    if None not in parts:
        return [tuple(parts)], []  # type: ignore[list-item]
    if parts[1:] == [1, 1]:
        # a 1-D block's warps are alike at any size: the second run tries a small block (thresholds on
        # threadIdx.x, reductions over blockDim.x), at a quarter of the first run's cost
        return [(256, 1, 1), (64, 1, 1)], ["block"]
    if parts[0] is None and parts[1] is None:
        z = parts[2] or 1
        if bound is not None:
            return [(min(32, bound), max(1, bound // 32), z), (min(16, bound), max(1, bound // 16), z)], ["block"]
        return [(32, 8, z), (16, 16, z)], ["block"]
    base, other, filled = list(parts), list(parts), []
    if parts[0] is None:
        base[0], other[0] = 32, 16
        filled.append("x")
    for i in (1, 2):
        if parts[i] is None:
            room = 1024 // (base[0] * (base[1] if i == 2 else 1))
            base[i] = max(1, min(8 if i == 1 else 2, room))
            other[i] = max(1, base[i] // 2)
            filled.append("xyz"[i])
    return [tuple(base), tuple(other)], filled  # type: ignore[list-item]


def build_model(context: FileContext, kernel: Function, config: KernelConfig) -> KernelModel:
    unit, name = context.unit, kernel.name
    body = ts.text(kernel.body)
    uses_y, uses_z = bool(_USES_Y.search(body)), bool(_USES_Z.search(body))
    bound_value = eval_host(kernel.launch_bounds[0], unit, None) if kernel.launch_bounds else None
    bound = bound_value[0] if bound_value is not None and len(bound_value) == 1 and bound_value[0] > 0 else None
    known, follows_assumed = _tied_block(kernel, config, one_dimensional=not (uses_y or uses_z))
    assumptions: list[Assumption] = []
    blocks, filled = _plausible_blocks(known, uses_y, uses_z, bound)
    if not filled:
        source = "assumed" if follows_assumed else \
            config.source if known is not None and None not in known else "launch_bounds"
    else:
        source = "assumed"
        if filled == ["block"]:
            reason = f"`__launch_bounds__({bound})` gives only the thread count" if known is None and bound \
                else _open_reason(config, name, "launch")
            assumptions.append(Assumption(Fact.BLOCK, "block", shape_text(blocks[0]), block_phrase(blocks[0]), reason))
        for dim in filled if filled != ["block"] else []:
            value = blocks[0]["xyz".index(dim)]
            assumptions.append(Assumption(Fact.BLOCK, f"block.{dim}", value, f"block.{dim} = {value}",
                                          _open_reason(config, name, "launch")))
    template_values: dict[str, int] = {}
    aliases: dict[str, str] = {}
    asserted = asserted_values(kernel) if kernel.template_params else {}
    for i, (tname, is_type) in enumerate(zip(kernel.template_params, template_kinds(kernel), strict=False)):
        given = config.template[i] if i < len(config.template) else None
        if given is None and not is_type:
            given = asserted.get(tname)
        if is_type and isinstance(given, str):
            given = _assume_open_arguments(unit, given, assumptions, _open_reason(config, name, "instantiation"))
        if is_type:
            aliases[tname] = given if isinstance(given, str) else ASSUMED_TEMPLATE_TYPE
        else:
            template_values[tname] = given if isinstance(given, int) else ASSUMED_TEMPLATE_INT
        if (is_type and not isinstance(given, str)) or (not is_type and not isinstance(given, int)):
            value = aliases[tname] if is_type else template_values[tname]
            assumptions.append(Assumption(Fact.TEMPLATE, tname, value, f"{tname} = {value}",
                                          _open_reason(config, name, "instantiation")))
    known_args = {p.name: v for p, v in zip(kernel.params, config.args, strict=False) if v is not None}
    # sizes the launch's block is computed from (`dim3(hidden_dim / heads, heads)`): each run gives them the
    # values its block has, never a sample the block contradicts
    with_block = [_block_parameters(config.block_params, b, known_args) for b in blocks]
    follow = set(with_block[0]) if all(set(w) == set(with_block[0]) for w in with_block) else set()
    # a size the launch's guard bounds below the sample (`if (C <= 4)` around it) takes the largest value it lets
    # through in every run, named as assumed as a sample is
    bounded = {p: b for p, b in config.bounds if p not in known_args and p not in follow and 0 < b < PARAM_SAMPLES[0]}
    sampled = [p.name for p in kernel.params if not p.pointer and p.name not in known_args and not _float(unit, p)
               and p.name not in follow and p.name not in bounded]
    shifts = set(sampled) & _exponents(body)
    # (still sizes the code does not fix: what rests on them is info and names them, as the block's shape)
    assumptions += [Assumption(Fact.SIZES, p, with_block[0][p], f"{p} = {with_block[0][p]}",
                               "the sizes its launch computes that block from", from_block=True)
                    for p in sorted(follow)]
    assumptions += [Assumption(Fact.SIZES, p, (SHIFT_SAMPLES if p in shifts else PARAM_SAMPLES)[0],
                               f"{p} = {(SHIFT_SAMPLES if p in shifts else PARAM_SAMPLES)[0]}",
                               _open_reason(config, name, "launch")) for p in sampled]
    assumptions += [Assumption(Fact.SIZES, p, b, f"{p} = {b}", f"the most {config.where}'s guard lets through")
                    for p, b in sorted(bounded.items())]
    runs = _runs(blocks, {**known_args, **bounded}, sampled, uses_y or uses_z, shifts)
    if follow:
        runs = [_following(r, with_block[blocks.index(r.block)], with_block[0]) if r.block in blocks else r
                for r in runs]
    model = KernelModel(context.path, unit, kernel, context.index, context.to_file,
                        blocks[0] if not filled else None, source, context,
                        dimension_params=_dimension_params(kernel) | set(known_args),
                        template_values=template_values, template_types=aliases)
    for cfg in runs:
        model.configs.append(cfg)
        model.runs.append(model.simulate(cfg))
    model.small_config, small = small_size_config(runs[0], model.runs[0], sampled, shifts,
                                                  _open_reason(config, name, "launch"))
    # The runs, not the model: the model holds its context, which holds these premises (a reference cycle kept
    # each edit's model, and the parse tree under it, until the cyclic collector ran).
    premises = Premises(blocks[0], tuple(assumptions), tuple(r.varies for r in runs),
                        tuple(r.block for r in runs), partial(site_params, model.runs), small)
    model.context = context.with_premises(premises)
    return model


def _following(run: RunConfig, values: dict[str, int], first: dict[str, int]) -> RunConfig:
    """The run with the sizes its block gives; a run whose sizes differ from the first's varies them."""
    varies = run.varies | {Fact.SIZES} if values != first else run.varies
    return replace(run, params=tuple(sorted({**dict(run.params), **values}.items())), varies=varies)


def _block_parameters(exprs: tuple[tuple[int, str], ...], block: tuple[int, int, int],
                      known: dict[str, int]) -> dict[str, int]:
    """Values of the kernel's parameters that make the launch's block expressions give `block`: `heads` = 8 and
    `hidden_dim` = 256 for block 32×8 of `dim3(hidden_dim / heads, heads)`; solved one unknown name at a time
    (a name alone, or `a / b`, `a * b` with the other side known); {} when one of them cannot be met."""
    values: dict[str, int] = {}
    pending = list(exprs)
    for _ in range(len(exprs) + 1):
        left = []
        for dim, expr in pending:
            solved = _solve(expr.replace(" ", ""), block[dim], {**known, **values})
            if solved is None:
                left.append((dim, expr))
            elif solved:
                values.update(solved)
        if len(left) == len(pending):
            break
        pending = left
    # a block the expressions cannot give (`dim3{tile_size, tile_size}` against an assumed 32×8): the sizes are
    # sampled apart, as before, rather than made to fit half of it
    return values if not pending else {}


_PRODUCT = re.compile(r"^\(?([A-Za-z_]\w*|\d+)\)?([*/])\(?([A-Za-z_]\w*|\d+)\)?$")


def _solve(expr: str, target: int, known: dict[str, int]) -> dict[str, int] | None:
    """{name: value} making `expr` equal `target`, {} when it already holds, None when it cannot be solved
    (two unknowns, a value that does not divide, a form other than `a`, `a / b`, `a * b`)."""
    def value(term: str) -> int | None:
        return int(term) if term.isdigit() else known.get(term)

    if re.fullmatch(r"[A-Za-z_]\w*", expr):
        return {} if known.get(expr) == target else None if expr in known else {expr: target}
    m = _PRODUCT.match(expr)
    if m is None:
        return None
    a, op, b = m.groups()
    va, vb = value(a), value(b)
    if va is not None and vb is not None:
        return {} if (va // vb if op == "/" and vb else va * vb) == target else None
    if op == "/" and va is None and vb:
        return {a: target * vb}
    if op == "*" and (va is None) != (vb is None):
        known_side, name = (vb, a) if va is None else (va, b)
        return {name: target // known_side} if known_side and target % known_side == 0 else None
    return None


def _assume_open_arguments(unit: Unit, given: str, assumptions: list[Assumption], reason: str) -> str:
    """A traits struct given with arguments its launch leaves open (`Traits<128, 2, kIsVecLoad, input_t>`
    where the host's `input_t` comes from a caller not seen): each is assumed as a kernel's own template
    parameter is, and named."""
    opened = unit.types.open_arguments(given)
    if not opened:
        return given
    values: dict[str, str] = {}
    for arg, kind in opened:
        value: str | int = ASSUMED_TEMPLATE_TYPE if kind == "type" else "true" if kind == "bool" else \
            ASSUMED_TEMPLATE_INT
        values[arg] = str(value)
        assumptions.append(Assumption(Fact.TEMPLATE, arg, value, f"{arg} = {value}", reason))
    return substitute(given, values)


def small_size_config(first: RunConfig, run: SimResult, sampled: list[str], shifts: set[str], reason: str,
                      ) -> tuple[RunConfig | None, tuple[Assumption, ...]]:
    """The first run again with each sampled size whose role in it calls for a size under a warp
    (SimResult.warp_sized) set to SMALL_SAMPLE (an exponent to SMALL_SHIFT), and the assumptions it makes;
    (None, ()) when no sampled size has such a role."""
    small = [p for p in sampled if p in run.warp_sized]
    if not small:
        return None, ()
    values = {p: SMALL_SHIFT if p in shifts else SMALL_SAMPLE for p in small}
    params = tuple(sorted({**dict(first.params), **values}.items()))
    assumptions = tuple(Assumption(Fact.SIZES, p, v, f"{p} < {5 if p in shifts else 32} (tried: {p} = {v})",
                                   reason) for p, v in values.items())
    return RunConfig(first.block, SMALL_SAMPLE, "sizes under a warp", params, frozenset({Fact.SIZES}),
                     first.block_index), assumptions


def _tied_block(kernel: Function, config: KernelConfig, one_dimensional: bool = False,
                ) -> tuple[PartialDim3 | None, bool]:
    """The configuration's block, with each dimension the launch writes as an open template argument
    (`dim3{CTA_SIZE, 1, 1}` for `k<TILE, CTA_SIZE>`) given that argument's value: the one `static_assert`
    fixes, else the assumed one. The block then follows the assumption instead of being assumed apart (a
    CTA_SIZE of 32 in a 256-thread block made races of a one-warp kernel's `__syncwarp()`); and whether a
    dimension took an assumed value (the findings then rest on the template assumption, which names it)."""
    kinds = template_kinds(kernel) if kernel.template_params else []
    tied = config.tied or _named_block_parameter(kernel, config, kinds, one_dimensional)
    if not tied:
        return config.block, False
    asserted = asserted_values(kernel)
    parts = list(config.block) if config.block is not None else [None, None, None]
    if not config.tied:  # a 1-D kernel whose block no launch gives: the parameter is its thread count
        parts[1:] = [1 if p is None else p for p in parts[1:]]
    assumed = False
    for dim, index in tied:
        name = kernel.template_params[index]
        given = config.template[index] if index < len(config.template) else None
        if parts[dim] is None and index < len(kinds) and not kinds[index]:  # a value parameter (a name it was
            # given reads as a type: `k<TILE, CTA_SIZE>` of a lambda's own parameters)
            parts[dim] = given if isinstance(given, int) else asserted.get(name, ASSUMED_TEMPLATE_INT)
            assumed |= not isinstance(given, int) and name not in asserted
    return (parts[0], parts[1], parts[2]), assumed


# A template value parameter named as the block's thread count (`BLOCK_THREADS`, `kBlockSize`, `block_size`,
# `NUM_THREADS`, `CTA_SIZE`, `THREADS_PER_BLOCK`): libraries launch `k<256><<<g, 256>>>` with the two alike
_BLOCK_PARAMETER = re.compile(r"(?i)^k?_?(?:block_?(?:threads|size|dim)|cta_?(?:threads|size)|num_?threads|threads"
                              r"(?:_?per_?block)?|tpb(?:_x)?)$")


def _named_block_parameter(kernel: Function, config: KernelConfig, kinds: list[bool],
                           one_dimensional: bool) -> tuple[tuple[int, int], ...]:
    """((0, index),) for a one-dimensional kernel that no launch is seen for and that has a template value
    parameter named as the block's thread count: the block follows that parameter (given or assumed) instead of
    being assumed apart from it (a `BLOCK_THREADS` of 32 in a 256-thread block made races of a block-strided
    loop `for (i = tx; i < n; i += BLOCK_THREADS)` that no launch can have)."""
    if not one_dimensional or config.source not in ("none", "instantiation") or \
            (config.block is not None and config.block[0] is not None):
        return ()  # (a launch seen with a run-time block leaves it open: `k<64><<<g, threads>>>`)
    for index, (name, is_type) in enumerate(zip(kernel.template_params, kinds, strict=False)):
        if not is_type and _BLOCK_PARAMETER.match(name):
            return ((0, index),)
    return ()


def _open_reason(config: KernelConfig, kernel: str, missing: str) -> str:
    """Why a fact had to be assumed: nothing gives it (`missing` names what would), or the configuration
    leaves it open."""
    if config.source == "none" or (config.source == "instantiation" and missing == "launch"):
        return f"no {missing} of `{kernel}` found"
    return f"not fixed by {config.where}"


def _float(unit: Unit, param) -> bool:
    info = unit.types.lookup(param.type_text)
    return info is not None and info.name in FLOAT_TYPES


_SHIFTED_CONSTANT = re.compile(r"\b\d+[uUlL]*\s*<<\s*\(?\s*([A-Za-z_]\w*)")


def _exponents(body: str) -> set[str]:
    """The names the kernel makes a size from by shifting a constant (`1 << log2N`, `1u << (bits)`), in one
    pass (a pattern per parameter would be compiled per name). A size shifted down by a name (`hidden >>
    merge_count`) says nothing of how large it is."""
    return {m.group(1) for m in _SHIFTED_CONSTANT.finditer(body)}


def _runs(blocks: list[tuple[int, int, int]], known: dict[str, int], sampled: list[str],
          two_d: bool, shifts: set[str] = frozenset()) -> list[RunConfig]:  # type: ignore[assignment]
    """The first run, and runs that try another block (when it was assumed) and other sizes (when some were
    sampled): for a 1-D kernel one run tries both, so that it costs what it did when only sizes varied."""
    def params(sample: int) -> tuple[tuple[str, int], ...]:
        bits = SHIFT_SAMPLES[PARAM_SAMPLES.index(sample)]
        return tuple(sorted({**known, **{p: bits if p in shifts else sample for p in sampled}}.items()))

    first, second = PARAM_SAMPLES
    runs = [RunConfig(blocks[0], first, _label(blocks[0]), params(first))]
    if len(blocks) > 1 and (two_d or not sampled):
        runs.append(RunConfig(blocks[1], first, _label(blocks[1]), params(first), frozenset({Fact.BLOCK})))
    elif len(blocks) > 1:
        runs.append(RunConfig(blocks[1], second, f"{_label(blocks[1])} with other sizes", params(second),
                              frozenset({Fact.BLOCK, Fact.SIZES}), OFF_DIAGONAL))
        return runs
    if sampled:
        runs.append(RunConfig(blocks[0], second, "other sizes", params(second), frozenset({Fact.SIZES}),
                              OFF_DIAGONAL))
    return runs


def _label(block: tuple[int, int, int]) -> str:
    return f"block {block[0]}×{block[1]}×{block[2]}"


SiteKey = tuple[int, ...]


def sites(model: KernelModel, events: str | Callable[[SimResult], list],
          keep: Callable[[object], bool] = lambda e: True,
          runs: list[SimResult] | None = None) -> dict[SiteKey, list[list]]:
    """Events grouped by source site, one list per run (of `runs`, the model's by default). `events` names a
    list of the runs ("accesses", "branches", "barriers") or derives one from a run."""
    runs = model.runs if runs is None else runs
    grouped: dict[SiteKey, list[list]] = {}
    for i, run in enumerate(runs):
        for event in (getattr(run, events) if isinstance(events, str) else events(run)):
            if not keep(event):
                continue
            key = getattr(event, "site", None) or (event.node.start_byte, event.node.end_byte)
            grouped.setdefault(key, [[] for _ in runs])[i].append(event)
    return grouped


def inlined_from(*events) -> tuple[tuple[Node, str], ...]:
    """The related places of an access or branch made by an inlined helper: for a header's helper (shown at the
    call), the helper's own expression that makes it; for a helper or lambda of this file (shown in the
    helper), the kernel's statement that called it, once per call among `events` (the records of one site: a
    helper called from several places shows each call whose lanes these are). The compiler's line table puts
    the instructions on either: shfl_scan's lambda, called four times, has its `switch` counted on its own
    line for three calls and on the call's line for the fourth (an H200)."""
    places: dict[tuple[int, int], tuple[Node, str]] = {}
    for event in events:
        if getattr(event, "origin", None) is not None:
            node, why = event.origin, f"the access itself, in the inlined helper: `{ts.text(event.origin)}`"
        elif getattr(event, "via", None) is not None:
            node, why = event.via, "reached through this call of the helper"
        else:
            continue
        places.setdefault((node.start_byte, node.end_byte), (node, why))
    return tuple(places[k] for k in sorted(places))


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
