"""The torch calls a model makes, seen from above the ATen dispatcher: what `cudalens model` ranks, what a
problem file's reference calls, and what the integration module swaps a kernel in for.

A call is one function of torch's Python API (`torch.nn.functional.group_norm`, `torch.conv2d`,
`torch.Tensor.softmax`…) as a `TorchFunctionMode` sees it: the outermost such call (torch pops the mode while
it runs, so `group_norm`'s own `torch.group_norm` is part of it, not a second call). Its signature is the
function, then every argument by name: a tensor by its shape, dtype and strides (its values are not part of it),
anything else by value. Two calls with the same signature are one row of the table and one problem; a kernel is
swapped in only for a call with the signature it was verified on.

This file is also copied next to a generated integration module (`cudalens_op_calls.py`), which imports it: so
it uses only the standard library and torch, imported inside functions.
"""

from __future__ import annotations

import functools
import inspect
import operator
from typing import Any

# Calls that read a tensor's metadata or make a view: no kernel, and too many to wrap in profiler ranges.
METADATA = frozenset({
    "__get__", "dim", "size", "stride", "numel", "is_contiguous", "data_ptr", "element_size", "storage_offset",
    "is_floating_point", "is_complex", "__len__", "__bool__", "__format__", "__repr__", "__hash__", "__eq__",
    "item", "tolist", "requires_grad_", "get_device", "type", "__iter__", "_is_view", "untyped_storage",
})
MODULES = ("torch.nn.functional", "torch", "torch.Tensor", "torch.special", "torch.linalg", "torch.fft")
# The elementwise calls a producer's output may flow into as a chain (one problem, one kernel for the pair): each
# output element depends on the same element of its inputs only, and its tensors all have one shape (no
# broadcast), so a kernel that writes the producer's element can finish it in the same pass. Out-of-place only.
ELEMENTWISE = frozenset({
    "torch.nn.functional.silu", "torch.nn.functional.relu", "torch.nn.functional.gelu",
    "torch.nn.functional.mish", "torch.nn.functional.hardswish", "torch.nn.functional.leaky_relu",
    "torch.nn.functional.elu", "torch.nn.functional.sigmoid", "torch.nn.functional.tanh",
    "torch.sigmoid", "torch.tanh", "torch.relu", "torch.Tensor.sigmoid", "torch.Tensor.tanh", "torch.Tensor.relu",
    "torch.add", "torch.mul", "torch.Tensor.add", "torch.Tensor.mul", "torch.Tensor.__add__",
    "torch.Tensor.__radd__", "torch.Tensor.__mul__", "torch.Tensor.__rmul__",
})


def function_name(func: Any) -> str:
    return getattr(func, "__name__", None) or type(func).__name__


def function_path(func: Any) -> str | None:
    """A dotted name that resolves to `func` (`torch.nn.functional.group_norm`), or None (a property getter)."""
    import importlib

    name = function_name(func)
    if name in METADATA:
        return None
    for module_name in MODULES:
        owner_name = module_name.removesuffix(".Tensor")
        owner: Any = importlib.import_module(owner_name)
        if module_name.endswith(".Tensor"):
            owner = owner.Tensor
        if getattr(owner, name, None) is func:
            return f"{module_name}.{name}"
    return None


def resolve(path: str) -> Any:
    """The function a `function_path` names."""
    owner, name = _owner(path)
    return getattr(owner, name)


def parameter_names(func: Any) -> tuple[str, ...] | None:
    """The names positional arguments bind to, or None for a builtin whose signature Python cannot see."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    return tuple(p.name for p in params)


def bind(names: tuple[str, ...] | None, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
    """(name, value) of every argument given: positional ones by parameter name where `names` are known
    (else `arg0`, `arg1`…), then keywords. No `inspect` here: torch.compile traces this."""
    out = []
    for i, value in enumerate(args):
        out.append((names[i] if names is not None and i < len(names) else f"arg{i}", value))
    out.extend(kwargs.items())
    return out


def tensor_meta(t: Any) -> dict:
    return {"shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch."), "stride": list(t.stride()),
            "device": t.device.type}


def describe(value: Any) -> dict:
    """The JSON form of one argument: {"tensor": meta}, {"tensors": [meta…]}, {"value": v}, {"dtype": name}, or
    {"opaque": type} for what a problem file cannot write down."""
    import torch

    if isinstance(value, torch.Tensor):
        return {"tensor": tensor_meta(value)}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return {"tensors": [tensor_meta(v) for v in value]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if _plain(value):
        return {"value": list(value) if isinstance(value, tuple) else value}
    return {"opaque": type(value).__name__}


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        # NaN never equals itself and inf has no literal: neither can be matched or written into a problem
        return not (isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))))
    return isinstance(value, (list, tuple)) and all(_plain(v) and not isinstance(v, (list, tuple)) for v in value)


def signature(path: str, bound: list[tuple[str, Any]]) -> tuple:
    """A hashable key: the function and each argument's description."""
    import json

    return (path, tuple((name, json.dumps(describe(v), sort_keys=True)) for name, v in bound))


def tensors_of(bound: list[tuple[str, Any]]) -> list[Any]:
    """The tensor arguments in order, a list argument's elements in place: a problem's forward inputs and a
    custom op's arguments."""
    import torch

    out: list[Any] = []
    for _, value in bound:
        if isinstance(value, torch.Tensor):
            out.append(value)
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
            out.extend(value)
    return out


# -- the integration side: swapping kernels in -------------------------------------------------------------------


def matcher(verified: list[list]) -> Any:
    """A check `bound -> bool` of whether a call's arguments are exactly the ones a kernel was verified on: the
    same names in the same order, tensors of the same shape, dtype, strides and device, every other value equal.
    What it compares is prepared once, here: the eager swap runs it on every call of a swapped function, the
    graph pass on every node calling one (the one implementation of "which call is swapped")."""
    import torch

    names = tuple(name for name, _ in verified)
    wants: list[tuple[str, Any]] = []
    for _, want in verified:
        if "tensor" in want:
            wants.append(("tensor", _tensor_want(want["tensor"])))
        elif "tensors" in want:
            wants.append(("tensors", tuple(_tensor_want(m) for m in want["tensors"])))
        elif "dtype" in want:
            wants.append(("dtype", getattr(torch, want["dtype"], None)))
        elif "value" in want:
            wants.append(("value", want["value"]))
        else:
            wants.append(("opaque", None))
    Tensor = torch.Tensor

    def check(bound: list[tuple[str, Any]]) -> bool:
        if len(bound) != len(names):
            return False
        for (name, value), want_name, (kind, want) in zip(bound, names, wants, strict=True):
            if name != want_name:
                return False
            if kind == "tensor":
                if not isinstance(value, Tensor) or not _tensor_is(value, want):
                    return False
            elif kind == "tensors":
                if not isinstance(value, (list, tuple)) or len(value) != len(want):
                    return False
                if not all(isinstance(v, Tensor) and _tensor_is(v, w) for v, w in zip(value, want, strict=True)):
                    return False
            elif kind == "dtype":
                if value is not want:
                    return False
            elif kind == "value":
                if isinstance(value, Tensor) or _as_json(value) != want:
                    return False
            else:
                return False
        return True

    return check


def _tensor_want(meta: dict) -> tuple:
    import torch

    return (tuple(meta["shape"]), tuple(meta["stride"]), getattr(torch, meta["dtype"], None), meta["device"])


def _tensor_is(t: Any, want: tuple) -> bool:
    shape, stride, dtype, device = want
    return t.dtype is dtype and t.shape == shape and t.stride() == stride and t.device.type == device


def matches(bound: list[tuple[str, Any]], verified: list[list]) -> bool:
    """`matcher(verified)(bound)`, for a single check."""
    return matcher(verified)(bound)


def _as_json(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def call_args(arguments: list[list], positional: int, tensors: list[Any]) -> tuple[tuple, dict]:
    """(args, kwargs) for a call described by `arguments` ([name, description] each, the first `positional` of
    them given by position), its tensors taken in order from `tensors`: how a problem's reference and a custom
    op's fake implementation call the original function."""
    import torch

    queue = list(tensors)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for i, (name, want) in enumerate(arguments):
        if "tensor" in want:
            value: Any = queue.pop(0)
        elif "tensors" in want:
            value = [queue.pop(0) for _ in want["tensors"]]
        elif "dtype" in want:
            value = getattr(torch, want["dtype"])
        else:
            value = want["value"]
        if i < positional:
            args.append(value)
        else:
            kwargs[name] = value
    return tuple(args), kwargs


def tensor_count(arguments: list[list]) -> int:
    return sum(1 if "tensor" in want else len(want.get("tensors", ())) for _, want in arguments)


class CallMatch:
    """One recorded call (`function`, `arguments` as a problem's CUDALENS_CALL has them) and the check of
    whether a call is exactly it: its arguments completed to the recorded order (`completer`), then compared
    (`matcher`). What the eager swap runs on every call of the function, and the graph pass on every node
    calling it: one implementation of "which call is swapped"."""

    def __init__(self, function: str, arguments: list[list]) -> None:
        self.path = function
        self.function = resolve(function)
        self.arguments = arguments
        self.names = parameter_names(self.function)
        self.complete = completer(arguments, self.function)
        self.accepts = matcher(arguments)

    def seen(self, bound: list[tuple[str, Any]]) -> list[tuple[str, Any]] | None:
        """The call's arguments in the recorded order when they are exactly the recorded ones, else None."""
        seen = self.complete(bound)
        return seen if seen is not None and self.accepts(seen) else None

    def calls(self, node: Any) -> bool:
        """Whether a graph node calls this function (Dynamo writes `h + r` as `operator.add`)."""
        if node.op == "call_function":
            return node.target is self.function or _GRAPH_OPERATORS.get(node.target) == self.path
        return node.op == "call_method" and self.path == f"torch.Tensor.{node.target}"

    def node_tensors(self, node: Any) -> list[tuple[str, Any]] | None:
        """The nodes of a graph node's tensor arguments, in the recorded order, each with its argument's name (a
        list argument's elements under its name), when the node's call is exactly the recorded one on the nodes'
        fake tensors (static shapes) and its output needs no gradient (a kernel has no backward); else None."""
        import torch

        if not self.calls(node):
            return None
        out = _example(node)
        if out is _UNKNOWN or getattr(out, "requires_grad", False):
            return None
        raw = dict(bind(self.names, tuple(node.args), dict(node.kwargs)))
        seen = self.complete([(name, _example(v)) for name, v in raw.items()])
        if seen is None or any(v is _UNKNOWN or not _static(v) for _, v in seen) or not self.accepts(seen):
            return None
        nodes: list[tuple[str, Any]] = []
        for name, value in seen:
            if isinstance(value, torch.Tensor):
                nodes.append((name, raw[name]))
            elif isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
                nodes.extend((name, n) for n in raw[name])
        return nodes


# what Dynamo's graph calls for `a + b` and `a * b`, by the function a TorchFunctionMode sees for them
_GRAPH_OPERATORS = {operator.add: "torch.Tensor.__add__", operator.mul: "torch.Tensor.__mul__"}


class Kernel:
    """One accepted kernel as a torch.library custom op `cudalens_<hash>::<name>` over the call's tensor
    arguments: its implementation calls the candidate's `ModelNew`, its fake implementation the original
    function (so torch.compile traces it with the right output shapes and dtypes). `mutates_args=()` is exact:
    the test that accepted the candidate checked that its inputs were unchanged and its output aliased none of
    them. `spec["modes"]`: where it was measured to beat what it replaces ("eager", "compiled").

    A chain's kernel (`spec["then"]`: the elementwise call that was the only reader of the call's output, and
    the argument it took it as) replaces the pair: its tensors are the call's, then the consumer's others; it
    is swapped only where a graph shows the pair (`graph_pass`), never by the eager `CallSwap`."""

    def __init__(self, spec: dict, folder: Any, load_by_path: Any) -> None:
        """`load_by_path`: jobkit's (this file runs where jobkit may not be: the integration module passes its copy)."""
        import torch

        self.spec = spec
        self._load_by_path = load_by_path
        self.call = CallMatch(spec["function"], spec["arguments"])
        self.function = self.call.function
        then = spec.get("then")
        self.then = CallMatch(then["function"], then["arguments"]) if then else None
        self.candidate_path = folder / spec["candidate"]
        self._model: Any = None
        self.hits = 0
        self.fallbacks = 0
        count = tensor_count(spec["arguments"]) + (tensor_count(then["arguments"]) - 1 if then else 0)
        schema = "(" + ", ".join(f"Tensor t{i}" for i in range(count)) + ") -> Tensor"
        qualified = f"{spec['namespace']}::{spec['name']}"
        namespace = getattr(torch.ops, spec["namespace"])
        if hasattr(namespace, spec["name"]):  # the module was imported again: the op is this same kernel
            self.op = getattr(namespace, spec["name"]).default
            return
        op = torch.library.custom_op(qualified, self.run, mutates_args=(), schema=schema)
        op.register_fake(self.reference)
        self.op = getattr(namespace, spec["name"]).default

    def swaps_in(self, mode: str) -> bool:
        return mode in self.spec.get("modes", ("eager", "compiled"))

    def reference(self, *tensors: Any) -> Any:
        """What the kernel replaces, on its tensors: the call, then its consumer (a chain's) on its output."""
        spec = self.spec
        own = tensor_count(spec["arguments"])
        args, kwargs = call_args(spec["arguments"], spec["positional"], list(tensors[:own]))
        out = self.function(*args, **kwargs)
        then = spec.get("then")
        if not then:
            return out
        others = list(tensors[own:])
        inputs = [out if name == then["input"] else others.pop(0)
                  for name, want in then["arguments"] if "tensor" in want]
        args, kwargs = call_args(then["arguments"], then["positional"], inputs)
        return self.then.function(*args, **kwargs)

    def run(self, *tensors: Any) -> Any:
        """The candidate on the call's tensors: the custom op's implementation, and what the eager swap calls
        directly (the dispatcher's way into a Python op costs more than a launch-bound call can spare)."""
        if self._model is None:
            # its forward itself: the candidate is our module, with no hooks for `__call__` to run
            self._model = _candidate_model(self.candidate_path, tensors[0].device, self._load_by_path).forward
        return self._model(*tensors)

    def direct(self, *tensors: Any) -> Any:
        """`run`, counted: what a graph run in eager mode (`eager_graph`) calls in place of the pair."""
        self.hits += 1
        return self.run(*tensors)


def _candidate_model(path: Any, device: Any, load_by_path: Any) -> Any:
    """`ModelNew(*get_init_inputs())` of an accepted candidate file, on `device`."""
    module = load_by_path("cudalens_candidate_" + path.stem.replace(".", "_"), path)
    init = getattr(module, "get_init_inputs", list)
    return module.ModelNew(*init()).to(device)


# -- in eager mode: the one function patched where it lives, for the duration of a forward ---------------------


class CallSwap:
    """A context manager: while it is entered, each kernel's function (`torch.nn.functional.group_norm`,
    `torch.Tensor.softmax`) is replaced where it lives by a wrapper that runs the kernel for exactly the call
    it was verified on (`Kernel.call`) and the original for every other call of that function. No other
    torch call is touched: a forward pays the check on the calls of the swapped functions only, not on every
    call as a TorchFunctionMode would (benchmarks/swap_cost.py).

    The kernel runs where autograd needs nothing of it (no input requires a gradient, or grad mode is off: it
    has no backward); a call made while a kernel runs (a candidate that calls the original) goes to the
    original. Code holding its own reference to the function (`from torch.nn.functional import softmax`)
    runs the original: `counts()` shows a kernel that ran for no call. The patch is the process's while the swap
    is entered: another thread's verified call meanwhile runs the kernel too (the same result); enter a swap
    from one thread at a time. `dry`: every call falls back after its check, nothing counted — the swap's own
    cost."""

    def __init__(self, kernels: list[Kernel], dry: bool = False) -> None:
        by_path: dict[str, list[Kernel]] = {}
        for kernel in kernels:
            if kernel.then is not None:
                continue  # a pair: only a graph shows that the call's output has no other reader (`eager_graph`)
            by_path.setdefault(kernel.spec["function"], []).append(kernel)
        # (owner, name, kernels, [original, its wrapper]): made once, so that entering costs a few setattr
        self._sites = [(*_owner(path), ks, [None, None]) for path, ks in by_path.items()]
        self.dry = dry
        self._depth = 0
        self._running = False
        self._saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> CallSwap:
        self._depth += 1
        if self._depth == 1:
            for owner, name, kernels, made in self._sites:
                current = getattr(owner, name)
                if made[0] is not current:  # first entry, or someone else's patch around ours since
                    made[:] = [current, self._wrapper(current, kernels)]
                self._saved.append((owner, name, vars(owner).get(name, _MISSING) if isinstance(owner, type) else current))
                setattr(owner, name, made[1])
        return self

    def __exit__(self, *exc: Any) -> None:
        self._depth -= 1
        if self._depth == 0:
            for owner, name, original in reversed(self._saved):
                if original is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, original)
            self._saved.clear()

    def _wrapper(self, original: Any, kernels: list[Kernel]) -> Any:
        import torch

        names = kernels[0].call.names
        grad_enabled = torch.is_grad_enabled

        def swapped(*args: Any, **kwargs: Any) -> Any:
            if self._running:
                return original(*args, **kwargs)
            bound = bind(names, args, kwargs)
            for kernel in kernels:
                seen = kernel.call.seen(bound)
                if seen is None:
                    continue
                tensors = tensors_of(seen)
                if self.dry or (grad_enabled() and any(t.requires_grad for t in tensors)):
                    break
                kernel.hits += 1
                self._running = True
                try:
                    return kernel.run(*tensors)
                finally:
                    self._running = False
            if not self.dry:
                kernels[0].fallbacks += 1
            return original(*args, **kwargs)

        swapped.__name__ = getattr(original, "__name__", "swapped")
        swapped.__doc__ = getattr(original, "__doc__", None)
        return swapped


_MISSING = object()


def _owner(path: str) -> tuple[Any, str]:
    """The module or class a `function_path` lives in, and its name there."""
    import importlib

    module_name, _, name = path.rpartition(".")
    if module_name == "torch.Tensor":
        return importlib.import_module("torch").Tensor, name
    return importlib.import_module(module_name), name


# -- under torch.compile: the kernels placed into the captured graph ---------------------------------------------


def graph_pass(kernels: list[Kernel], direct: bool = False) -> Any:
    """An Inductor pre-grad pass (`torch.compile(model, options={"pre_grad_custom_pass": graph_pass(k)})`) that
    replaces each node of Dynamo's graph calling a kernel's function with exactly its verified arguments (the
    same `CallMatch` as the eager mode, on the nodes' fake tensors) by the kernel's custom op. Dynamo's graph
    is at the level of torch's Python API (`F.group_norm`, `Tensor.softmax`), where the signatures live; after
    it, Inductor fuses everything else as it would without the kernels. A graph traced with symbolic shapes
    matches nothing: the kernel was verified on one shape.

    A chain's kernel replaces a consumer node and the producer node it reads, where the producer's output has
    that one consumer and nothing else in the graph (the graph's users: another op, a view, the graph's
    output), the consumer reads it once, and both calls are exactly the recorded ones. Chains are matched
    first: a pair's kernel takes the place of a kernel for its producer alone. `direct`: the nodes call the
    kernel's `direct` (a graph run as Python, `eager_graph`) instead of its custom op."""
    return _graph_pass_class()(kernels, direct)


def eager_graph(model: Any, kernels: list[Kernel]) -> Any:
    """`model` in eager mode with `kernels` in Dynamo's graph of it: the graph, with `graph_pass` applied, runs
    as Python op by op (no Inductor), so that a chain's kernel runs where the graph shows its pair. Another
    shape gets another graph (symbolic: it matches nothing), and a graph break leaves the pair across it
    unmatched (the producer's output is then the first graph's output)."""
    import torch

    swap = graph_pass(kernels, direct=True)

    def backend(gm: Any, example_inputs: Any) -> Any:
        swap(gm.graph)
        gm.recompile()
        return gm.forward

    return torch.compile(model, backend=backend)


@functools.cache
def _graph_pass_class() -> type:
    import torch.fx
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class GraphSwap(CustomGraphPass):
        def __init__(self, kernels: list[Kernel], direct: bool) -> None:
            self.kernels = kernels
            self.direct = direct
            self.replaced = 0  # kernels placed, over every graph this pass saw (a chain counts once)

        def uuid(self) -> Any:  # the FX graph cache keys on it: the same kernels, the same compiled code
            return (f"cudalens-graph-swap{':direct' if self.direct else ''}:"
                    + ",".join(f"{k.spec['namespace']}::{k.spec['name']}" for k in self.kernels))

        def __call__(self, graph: Any) -> None:
            for chains in (True, False):
                for node in list(graph.nodes):  # a chain's producer comes before its consumer: seen already
                    found = self._kernel_for(node, chains)
                    if found is None:
                        continue
                    kernel, tensor_nodes, producer = found
                    with graph.inserting_before(node):
                        new = graph.call_function(kernel.direct if self.direct else kernel.op, tuple(tensor_nodes))
                    new.meta.update(node.meta)
                    node.replace_all_uses_with(new)
                    graph.erase_node(node)
                    if producer is not None:
                        graph.erase_node(producer)
                    self.replaced += 1

        def _kernel_for(self, node: Any, chains: bool) -> tuple[Kernel, list[Any], Any] | None:
            """The kernel verified on this node's call (`chains`: on the pair this node ends), the nodes of its
            tensor arguments in order, and the producer node it also replaces (None for a single call)."""
            for kernel in self.kernels:
                if (kernel.then is not None) is not chains:
                    continue
                if not chains:
                    own = kernel.call.node_tensors(node)
                    if own is not None:
                        return kernel, [n for _, n in own], None
                    continue
                consumer = kernel.then.node_tensors(node)
                if consumer is None:
                    continue
                slot = kernel.spec["then"]["input"]
                produced = [n for name, n in consumer if name == slot]
                if len(produced) != 1 or not isinstance(produced[0], torch.fx.Node):
                    continue
                producer = produced[0]
                if list(producer.users) != [node] or sum(n is producer for _, n in consumer) != 1:
                    continue  # another reader of the producer's output, or the consumer reads it twice
                own = kernel.call.node_tensors(producer)
                if own is None:
                    continue
                return kernel, [n for _, n in own] + [n for name, n in consumer if name != slot], producer
            return None

    return GraphSwap


_UNKNOWN = object()


def _example(arg: Any) -> Any:
    """A graph node's argument as the call saw it: a node by its fake tensor, a list element-wise."""
    import torch
    import torch.fx

    if isinstance(arg, torch.fx.Node):
        value = arg.meta.get("example_value", arg.meta.get("val", _UNKNOWN))
        return value if isinstance(value, torch.Tensor) else _UNKNOWN
    if isinstance(arg, (list, tuple)):
        items = [_example(a) for a in arg]
        return _UNKNOWN if any(v is _UNKNOWN for v in items) else type(arg)(items)
    return arg


def completer(arguments: list[list], func: Any) -> Any:
    """A function `bound -> bound in the order of a problem's arguments, those it lacks at the function's
    defaults`, or None when it has one the problem does not or lacks one without a default. The function's
    defaults are read once, here. A call may spell out less than the recorded one: `F.softmax` hands
    `_stacklevel` and `dtype` to `__torch_function__` (so the problem lists them), while the model's own call
    `F.softmax(att, dim=-1)`, which the eager swap sees, and Dynamo's graph node give only `dim`."""
    names = tuple(name for name, _ in arguments)
    known = set(names)
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        params = {}
    defaults = {name: p.default for name, p in params.items() if p.default is not inspect.Parameter.empty}

    def complete(bound: list[tuple[str, Any]]) -> list[tuple[str, Any]] | None:
        if len(bound) == len(names) and all(b[0] == n for b, n in zip(bound, names, strict=True)):
            return bound
        given = dict(bound)
        if len(given) != len(bound) or not given.keys() <= known:
            return None
        out = []
        for name in names:
            if name in given:
                out.append((name, given[name]))
            elif name in defaults:
                out.append((name, defaults[name]))
            else:
                return None
        return out

    return complete


def with_defaults(bound: list[tuple[str, Any]], arguments: list[list], func: Any) -> list[tuple[str, Any]] | None:
    """`completer(arguments, func)(bound)`, for a single call."""
    return completer(arguments, func)(bound)


def _static(value: Any) -> bool:
    """No symbolic size or stride: a kernel matches concrete shapes only."""
    import torch

    if isinstance(value, torch.Tensor):
        return all(isinstance(n, int) for n in (*value.shape, *value.stride()))
    if isinstance(value, (list, tuple)):
        return all(_static(v) for v in value)
    return True
