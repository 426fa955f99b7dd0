"""What a `kernel<<<grid, block, smem, stream>>>(args)` site sets: its constant grid, block (each dimension that
is constant, when not all are), shared bytes, template arguments and integer arguments — evaluated in its host
function, and again under each call of that function when the values come from its caller: `launch(x, 128)`
gives `block_size` inside `void launch(float* x, int block_size)` the value 128, up a few calls
(llm.c's `main` → `layernorm_forward(…, block_size)` → `layernorm_forward1(…, block_size)` → the launch), and a
`for` loop over a constant array (`int block_size = block_sizes[j];`) gives one value per element."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.bounded_cache import remember
from cudalens.analysis.host_eval import (
    Binding,
    PartialDim3,
    assigned_value,
    dim3_arguments,
    dim3_parts,
    eval_host,
    host_type,
)
from cudalens.analysis.reaching import declaration_of, writes
from cudalens.analysis.syntax import find
from cudalens.analysis.unit import Function, Launch, Unit

Node = ts.Node
Dim3 = tuple[int, int, int]
TemplateArg = int | str | None  # an integer value, a type's spelling, or unknown

MAX_BINDINGS = 8  # call contexts per host function: llm.c's dev/cuda files try 6 block sizes
MAX_CALL_DEPTH = 3


@dataclass(frozen=True)
class LaunchValues:
    """The values of a `<<<grid, block, smem, stream>>>` that are constant (None where they are not)."""

    grid: Dim3 | None
    block: Dim3 | None
    dynamic_shared_bytes: int | None
    block_dims: PartialDim3 | None = None  # each constant dimension, when `block` is not all constant
    template_args: tuple[TemplateArg, ...] = ()
    args: tuple[int | None, ...] = ()  # the kernel's arguments, where they are integer constants
    via: str = ""  # the call of the host function these values hold for: "`launch(x, 128)` (line 30)"
    # (block dimension, template argument) pairs written with one name that neither fixes: `dim3{CTA_SIZE, 1, 1}`
    # for `k<TILE, CTA_SIZE><<<g, threads>>>` makes block.x the kernel's second template argument
    block_from_template: tuple[tuple[int, int], ...] = ()
    # (block dimension, its expression over the launch's arguments by position, `$2 / $1`) for a dimension the
    # host computes from values it also passes to the kernel: DeepSpeed's `dim3(hidden_dim / heads, heads)`
    # for `k<<<g, b>>>(out, in, heads, hidden_dim)`
    block_from_args: tuple[tuple[int, str], ...] = ()
    dispatched: bool = False  # inside a `case` of a switch on a variable (a dispatch over sizes: case_values)
    # (argument position, the largest value it may have there) for an argument the host tests before launching:
    # `if (C <= 4) k<T, 4, 64><<<g, b>>>(…, C, …)` passes a C of at most 4 (guard_bounds)
    arg_bounds: tuple[tuple[int, int], ...] = ()


_CACHE_LIMIT = 4096
_cache: dict[tuple, LaunchValues] = {}


def launch_values(launch: Launch, unit: Unit, host_text: str) -> LaunchValues:
    """The launch's constant values in its own host function. They depend only on that function's text
    (`host_text`, read once per host function by the caller) and the unit's macros and constants, so they are
    remembered across edits: evaluating every launch of a 3,000-line file on every keystroke cost ~70 ms."""
    key = (host_text, ts.text(launch.node), launch.node.start_byte, unit.definitions_key)
    values = _cache.get(key)
    if values is None:
        values = remember(_cache, key, evaluate_launch(launch, unit, {}), _CACHE_LIMIT)
    return values


def evaluate_launch(launch: Launch, unit: Unit, binding: Binding, via: str = "") -> LaunchValues:
    cfg, scope = launch.config, launch.host_function
    cases = case_values(launch.node, unit, scope, binding)
    binding = {**binding, **cases}

    def shape(node: Node) -> PartialDim3 | None:
        value = dim3_parts(node, unit, scope, binding)  # each name as the last write before the launch gives it
        if value is None or any(v is not None and v <= 0 for v in value):
            return None  # 0 is a placeholder, not a launch
        return value

    block_dims = shape(cfg[1]) if len(cfg) > 1 else None
    grid_dims = shape(cfg[0]) if len(cfg) > 0 else None
    smem = eval_host(cfg[2], unit, scope, binding=binding) if len(cfg) > 2 else None
    args_node = launch.node.child_by_field_name("arguments")
    args = tuple(_integer(a, unit, scope, binding) for a in ts.arguments(args_node))
    bounds = guard_bounds(launch.node, unit, scope, binding) if None in args else {}
    arg_bounds = tuple((i, bounds[ts.text(a)]) for i, a in enumerate(ts.arguments(args_node))
                       if args[i] is None and a.type == "identifier" and ts.text(a) in bounds)
    return LaunchValues(
        block_from_template=_tied(cfg[1] if len(cfg) > 1 else None, block_dims, launch, unit, scope),
        block_from_args=_from_arguments(cfg[1] if len(cfg) > 1 else None, block_dims, args_node, unit, scope),
        grid=_whole(grid_dims),
        block=_whole(block_dims),
        dynamic_shared_bytes=smem[0] if smem and smem[0] >= 0 else None,
        block_dims=block_dims,
        template_args=tuple(template_argument(a, unit, scope, binding) for a in launch.template_args),
        args=args,
        via=via,
        dispatched=bool(cases),
        arg_bounds=arg_bounds,
    )


def _tied(block: Node | None, dims: PartialDim3 | None, launch: Launch, unit: Unit,
          scope: Node | None) -> tuple[tuple[int, int], ...]:
    """The open block dimensions written as one of the launch's template arguments, with its position."""
    if not launch.template_args or (dims is not None and None not in dims):
        return ()
    written = dim3_arguments(block, unit, scope) or ()
    names = [" ".join(ts.text(a).split()) for a in launch.template_args]
    out = []
    for d, arg in enumerate(written[:3]):
        text = " ".join(ts.text(arg).split())
        if (dims is None or dims[d] is None) and text in names:
            out.append((d, names.index(text)))
    return tuple(out)


def _from_arguments(block: Node | None, dims: PartialDim3 | None, args_node: Node | None, unit: Unit,
                    scope: Node | None) -> tuple[tuple[int, str], ...]:
    """The open block dimensions written only with names the launch also passes as arguments, each as an
    expression over the arguments' positions (`$3 / $2`)."""
    if args_node is None or (dims is not None and None not in dims):
        return ()
    positions = {ts.text(a): i for i, a in enumerate(ts.arguments(args_node)) if a.type == "identifier"}
    written = dim3_arguments(block, unit, scope) or ()
    out = []
    for d, arg in enumerate(written[:3]):
        text = " ".join(ts.text(arg).split())
        names = _IDENT.findall(text)
        if (dims is None or dims[d] is None) and names and all(n in positions for n in names) and \
                not any(_reassigned(n, scope, unit) for n in names if scope is not None):
            out.append((d, _IDENT.sub(lambda m: f"${positions[m.group(0)]}", text)))
    return tuple(out)


def case_values(node: Node, unit: Unit, scope: Node | None, binding: Binding) -> dict[str, tuple[int, ...]]:
    """What the `case` labels around a launch say of the variables switched on: in cuda-samples' reductions,
    `switch (threads) { case 16: reduce<16><<<grid, dim3(threads)>>>(…); … }` launches 16-thread blocks."""
    out: dict[str, tuple[int, ...]] = {}
    at = node.parent
    while at is not None and at is not scope:
        if at.type == "case_statement":
            switch = at.parent.parent if at.parent is not None else None
            cond = switch.child_by_field_name("condition") if switch is not None else None
            inner = cond.named_children[-1] if cond is not None and cond.named_children else None
            label = at.child_by_field_name("value")
            if switch is not None and switch.type == "switch_statement" and inner is not None and \
                    inner.type == "identifier" and label is not None and ts.text(inner) not in out and \
                    not (scope is not None and _reassigned(ts.text(inner), scope, unit)):
                value = eval_host(label, unit, scope, binding=binding)
                if value is not None and len(value) == 1:
                    out[ts.text(inner)] = value
        at = at.parent
    return out


_UPPER = {"<=": 0, "<": -1}  # `x <= K`, `x < K`: the largest x that passes is K + this
_MIRRORED = {">=": "<=", ">": "<"}


def guard_bounds(node: Node, unit: Unit, scope: Node | None, binding: Binding) -> dict[str, int]:
    """The largest value each variable may have at `node`, from the conditions of the `if`s it sits in the
    body of (`if (C <= 4) { … }`, `else if (C <= 8)`, `if (n < 32 && …)`): a dispatch over sizes, each launch
    made for its own range."""
    out: dict[str, int] = {}
    child, at = node, node.parent
    while at is not None and at is not scope:
        clause = at.child_by_field_name("condition") if at.type == "if_statement" else None
        if clause is not None and at.child_by_field_name("consequence") == child:
            for name, bound in _upper_bounds(clause.child_by_field_name("value") or clause, unit, scope, binding):
                if not (scope is not None and _reassigned(name, scope, unit)):
                    out[name] = min(bound, out.get(name, bound))
        child, at = at, at.parent
    return out


def _upper_bounds(cond: Node, unit: Unit, scope: Node | None, binding: Binding) -> list[tuple[str, int]]:
    """(name, largest value) of each `name <= K` / `name < K` / `K >= name` conjunct of a condition."""
    while cond.type == "parenthesized_expression" and cond.named_children:
        cond = cond.named_children[-1]
    if cond.type != "binary_expression":
        return []
    op = ts.text(cond.child_by_field_name("operator"))
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if op == "&&":
        return _upper_bounds(left, unit, scope, binding) + _upper_bounds(right, unit, scope, binding)
    if op in _MIRRORED:
        op, left, right = _MIRRORED[op], right, left
    if op not in _UPPER or left.type != "identifier":
        return []
    value = eval_host(right, unit, scope, binding=binding)
    return [(ts.text(left), value[0] + _UPPER[op])] if value is not None and len(value) == 1 else []


def _whole(parts: PartialDim3 | None) -> Dim3 | None:
    return parts if parts is not None and all(v is not None for v in parts) else None  # type: ignore[return-value]


def _integer(node: Node, unit: Unit, scope: Node | None, binding: Binding) -> int | None:
    if node.type in ("pointer_expression", "string_literal"):
        return None
    value = eval_host(node, unit, scope, binding=binding)
    return value[0] if value is not None and len(value) == 1 else None


def template_argument(node: Node, unit: Unit, scope: Node | None, binding: Binding) -> TemplateArg:
    """`128`, `BLOCK` (a macro or constant) → the integer; `float` → "float"; the host function's own template
    type parameter → what the binding gives it; anything else → None."""
    value = eval_host(node, unit, scope, binding=binding)
    if value is not None and len(value) == 1:
        return value[0]
    if node.type != "type_descriptor":
        return None
    text = " ".join(ts.text(node).split())
    bound = binding.get(text)
    if isinstance(bound, str):
        return bound
    host_params = _template_params(scope)
    if text in host_params or bound is not None:
        return None
    # a local `using Ktraits = Traits<kNThreads, float>;`, with what the binding gives the host's parameters
    return host_type(text, unit, scope, node.start_byte, binding)


def open_names(arg: TemplateArg, scope: Node | None) -> set[str]:
    """The host function's template parameters a type argument still names (`Traits<kNThreads, float>` inside
    `template <int kNThreads> void launch()`): its callers may fix them."""
    if not isinstance(arg, str):
        return set()
    params = _template_params(scope)
    return {w for w in _IDENT.findall(arg) if w in params} if params else set()


def _template_params(scope: Node | None) -> set[str]:
    parent = scope.parent if scope is not None else None
    if parent is None or parent.type != "template_declaration":
        return set()
    params = parent.child_by_field_name("parameters")
    return {ts.text(c).split()[-1] for c in (params.named_children if params is not None else [])}


_IDENT = re.compile(r"[A-Za-z_]\w*")


def _reassigned(name: str, scope: Node, unit: Unit) -> bool:
    """Whether `name` (or a field of it, `block.x`) is assigned in `scope` other than by its initializer, or
    its address is taken (`cudaOccupancyMaxPotentialBlockSize(&grid, &block, k)`): then its declared value is
    not the one every launch sees (`threads = n < 256 ? 64 : 256;`)."""
    key = ("reassigned", scope)
    names = unit.declarations.get(key)
    if names is None:
        names = unit.declarations[key] = _assigned_names(scope)
    return name in names


def _assigned_names(scope: Node) -> frozenset[str]:
    return frozenset(name for name, _ in writes(scope))


# ---- call contexts ---------------------------------------------------------------------------------------


def _needs_binding(values: LaunchValues, launch: Launch) -> bool:
    """Whether something the launch leaves unknown could come from its host function's callers."""
    return (values.block is None or None in values.template_args or
            any(open_names(a, launch.host_function) for a in values.template_args)) and \
        launch.host_function is not None and _has_inputs(launch.host_function)


def _has_inputs(host: Node) -> bool:
    declarator = host.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    return bool(params is not None and params.named_children) or bool(_template_params(host))


class CallGraph:
    """Who calls each host function of a unit, by name (built once per unit, when a launch needs it)."""

    def __init__(self, unit: Unit, hosts: list[Function]) -> None:
        self.unit = unit
        self.by_node = {(f.node.start_byte, f.node.end_byte): f for f in hosts}
        self.calls: dict[str, list[tuple[Function, Node]]] = {}
        for f in hosts:
            for call in find(f.body, "call"):
                name = _callee(call)
                if name:
                    self.calls.setdefault(name, []).append((f, call))

    def function(self, node: Node | None) -> Function | None:
        return None if node is None else self.by_node.get((node.start_byte, node.end_byte))

    def contexts(self, function: Function, depth: int = 0,
                 chain: frozenset[str] = frozenset()) -> list[tuple[Binding, str]]:
        """Bindings of `function`'s parameters from its call sites, each with the call it comes from; [] when
        no call fixes anything (called from elsewhere, or only with run-time values)."""
        if depth >= MAX_CALL_DEPTH or function.name in chain:
            return []
        out: list[tuple[Binding, str]] = []
        for caller, call in self.calls.get(function.name, []):
            outer = self.contexts(caller, depth + 1, chain | {function.name}) if _has_inputs(caller.node) else []
            for caller_binding, outer_via in outer or [({}, "")]:
                for binding in _bind(function, call, caller, caller_binding, self.unit):
                    # the call where the values start: the outermost one that fixed them
                    via = outer_via or f"`{_short(ts.text(call))}` (line {call.start_point[0] + 1})"
                    out.append((binding, via))
                    if len(out) >= MAX_BINDINGS:
                        return out
        return out


def _callee(call: Node) -> str:
    func = call.child_by_field_name("function")
    if func is not None and func.type == "template_function":
        func = func.child_by_field_name("name")
    return ts.text(func).split("::")[-1] if func is not None and func.type in (
        "identifier", "qualified_identifier") else ""


def _bind(function: Function, call: Node, caller: Function, outer: Binding, unit: Unit) -> list[Binding]:
    """The bindings one call gives the callee's parameters: one per combination of the values an argument
    can take (a loop over a constant array gives several); names without a constant value are left out."""
    choices: list[list[tuple[str, tuple[int, ...] | str]]] = []
    args_node = call.child_by_field_name("arguments")
    args = ts.arguments(args_node)
    for param, arg in zip(function.params, args, strict=False):
        values = alternatives(arg, unit, caller.node, outer)
        if values:
            choices.append([(param.name, v) for v in values])
    func = call.child_by_field_name("function")
    targs = func.child_by_field_name("arguments") if func is not None and func.type == "template_function" else None
    for name, targ in zip(function.template_params, ts.arguments(targs), strict=False):
        value = template_argument(targ, unit, caller.node, outer)
        if value is not None:
            choices.append([(name, (value,) if isinstance(value, int) else value)])
    combos = itertools.islice(itertools.product(*choices), MAX_BINDINGS)
    return [dict(pairs) for pairs in combos] if choices else []


def alternatives(node: Node, unit: Unit, scope: Node, binding: Binding, depth: int = 0) -> list[tuple[int, ...]]:
    """The constant values an argument can have: one, or each element of the constant array it is read from."""
    value = eval_host(node, unit, scope, binding=binding)
    if value is not None:
        return [value]
    if depth > 3:
        return []
    if node.type == "identifier":
        value = assigned_value(node, unit, scope)
        return alternatives(value, unit, scope, binding, depth + 1) if value is not None else []
    if node.type == "subscript_expression":
        array = node.child_by_field_name("argument")
        found = declaration_of(ts.text(array), scope, node.start_byte, unit.declarations) if array is not None and \
            array.type == "identifier" else None
        values = found[1] if found is not None else None
        if values is not None and values.type == "initializer_list":
            elements = [eval_host(e, unit, scope, binding=binding) for e in values.named_children]
            if elements and all(e is not None and len(e) == 1 for e in elements):
                return list(dict.fromkeys(elements))  # type: ignore[arg-type]
    return []


_bound_cache: dict[tuple, list[LaunchValues]] = {}


def bound_configurations(launch: Launch, unit: Unit, graph: Callable[[], CallGraph], host_key: str,
                         host_text: str) -> list[LaunchValues]:
    """The launch's values: in its host function alone, or under each call that fixes more of them. The call
    graph is built only when a launch needs it, and the results are kept while the text outside kernel
    bodies (`host_key`) stays the same: typing in a kernel costs nothing here."""
    plain = launch_values(launch, unit, host_text)
    if not _needs_binding(plain, launch):
        return [plain]
    key = (host_key, host_text, ts.text(launch.node), launch.node.start_byte) if host_key else None
    found = _bound_cache.get(key) if key is not None else None
    if found is None:
        host = graph().function(launch.host_function)
        contexts = graph().contexts(host) if host is not None else []
        bound = [evaluate_launch(launch, unit, binding, via) for binding, via in contexts]
        distinct = list({_values_key(v): v for v in bound if _values_key(v) != _values_key(plain)}.values())
        found = distinct or [plain]
        if key is not None:
            remember(_bound_cache, key, found, _CACHE_LIMIT)
    return found


def _values_key(v: LaunchValues) -> tuple:
    return (v.grid, v.block_dims, v.dynamic_shared_bytes, v.template_args, v.args, v.block_from_args, v.arg_bounds)


def _short(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
