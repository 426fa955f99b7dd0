"""The integration module `cudalens model --integrate` writes: each accepted kernel registered as a
torch.library custom op (a fake implementation too, so torch.compile traces it) and swapped into the model
only for the arguments it was verified on: in eager mode by patching the one function it replaces for the
length of a forward, under torch.compile by an Inductor pass over the captured graph. The machinery is
`lib/op_calls.py`, copied beside the module as `cudalens_op_calls.py` so that the model's code needs torch
only; the generated file is data (which call, which candidate file) and jobkit's `load_by_path`, its text
copied in.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from cudalens.analysis import python_ast
from cudalens.model.profile import ModelError
from cudalens.worker.child.lib import jobkit
from cudalens.worker.jobs import LIB_DIR

MODULE_NAME = "cudalens_kernels"
RUNTIME_NAME = "cudalens_op_calls"
CANDIDATE_SUFFIX = ".optimized.py"  # what `cudalens optimize` writes beside a problem


class IntegrationError(ModelError):
    """A problem or candidate file is not what the integration needs: one line."""


@dataclass(frozen=True)
class Accepted:
    problem: Path
    candidate: Path
    call: dict  # the problem's CUDALENS_CALL

    @property
    def name(self) -> str:
        return "k" + re.sub(r"\W", "_", self.problem.stem)

    def to_json(self) -> dict:
        return {"problem": str(self.problem), "candidate": str(self.candidate), "call": self.call}

    @classmethod
    def from_json(cls, d: dict) -> Accepted:
        return cls(Path(d["problem"]), Path(d["candidate"]), dict(d["call"]))

    @property
    def op(self) -> str:
        """What it replaces, as the output names it: `group_norm`; a chain's `group_norm+silu`."""
        return "+".join(c["function"].rpartition(".")[2] for c in (self.call, self.call.get("then")) if c)


def problem_call(problem: Path) -> dict:
    """The `CUDALENS_CALL` a problem file written by `cudalens model` declares."""
    try:
        tree = python_ast.parse(problem.read_text(encoding="utf-8"), str(problem))
    except (OSError, SyntaxError, ValueError) as exc:
        raise IntegrationError(f"{problem}: cannot be read as Python ({exc})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CUDALENS_CALL"
                                                for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                break
    raise IntegrationError(f"{problem.name} has no CUDALENS_CALL: it was not written by `cudalens model`")


def candidates(folder: Path) -> list[Accepted]:
    """Each problem of `folder` with a candidate beside it (`NN_name.optimized.py`), in problem order."""
    out = []
    for candidate in sorted(folder.glob(f"*{CANDIDATE_SUFFIX}")):
        problem = candidate.with_name(candidate.name.removesuffix(CANDIDATE_SUFFIX) + ".py")
        if problem.is_file() and not problem.name.endswith(CANDIDATE_SUFFIX):
            out.append(Accepted(problem, candidate, problem_call(problem)))
    return out


def write(folder: Path, accepted: list[Accepted], source: str, modes: dict[str, tuple[str, ...]] | None = None) -> Path:
    """`folder/cudalens_kernels.py` (and its runtime) for `accepted`; returns its path. `modes`: by kernel
    name, where it is swapped in ("eager", "compiled"; model/swap.py decides); absent: nowhere."""
    modes = modes or {}
    digest = hashlib.sha256()
    for a in accepted:
        digest.update(a.candidate.read_bytes())
    namespace = f"cudalens_{digest.hexdigest()[:10]}"  # a kernel's source changes: a new op, never a clash
    shutil.copyfile(LIB_DIR / "op_calls.py", folder / f"{RUNTIME_NAME}.py")
    specs = ",\n".join(
        "    " + repr({"namespace": namespace, "name": a.name, "candidate": a.candidate.name,
                       "function": a.call["function"], "positional": a.call["positional"],
                       "arguments": a.call["arguments"], "modes": list(modes.get(a.name, ())),
                       **({"then": a.call["then"]} if a.call.get("then") else {})})
        for a in accepted
    )
    path = folder / f"{MODULE_NAME}.py"
    # The model's program may lack cudalens: the module carries jobkit's loader, text and all.
    loader = inspect.getsource(jobkit.load_by_path)
    path.write_text(TEMPLATE.format(source=source, specs=specs, runtime=RUNTIME_NAME, load_by_path=loader),
                    encoding="utf-8")
    return path


TEMPLATE = '''"""The kernels cudalens verified for {source}, as torch.library custom ops swapped into the model.

    import {module}
    fast = {module}.swap(model)       # eager: the kernels that beat eager PyTorch
    with {module}.swapped():          # or: those kernels for whatever runs in the block
        model(x)
    fast_compiled = {module}.compiled(model)  # torch.compile, the kernels that beat the compiled op in its graph

Each kernel replaces its call only for the arguments it was verified on (the shapes, dtypes, strides and
device of its problem file, and every other argument's value); any other call, the same function with other
shapes included, runs the original. A kernel is swapped in a mode only where it was measured faster than what
it replaces there (SPECS' "modes"; `cudalens model --integrate` says why the others are not). Written by `cudalens model {source} --integrate`: run it again rather than
editing this file.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import torch

_HERE = Path(__file__).resolve().parent


{load_by_path}

op_calls = load_by_path("cudalens_op_calls_" + str(abs(hash(str(_HERE)))), _HERE / "{runtime}.py")

SPECS = [
{specs},
]
KERNELS = [op_calls.Kernel(spec, _HERE, load_by_path) for spec in SPECS]


EAGER = [k for k in KERNELS if k.swaps_in("eager")]
# a chain's kernel replaces a pair of calls where Dynamo's graph of the model shows that pair: with one, eager
# mode runs that graph, op by op, with every eager kernel in it (op_calls.eager_graph)
CHAINED = any(k.then is not None for k in EAGER)
GRAPH_PASS = op_calls.graph_pass([k for k in KERNELS if k.swaps_in("compiled")])


def swapped():
    """A context manager: inside it, each verified call runs its kernel, in eager mode (the functions the
    kernels replace are patched while it lasts; every other torch call is untouched). A chain's kernel needs
    the graph: `swap(model)`."""
    return op_calls.CallSwap(EAGER)


class Swapped(torch.nn.Module):
    """`model` with the kernels swapped in, in eager mode; its parameters are the model's. Under torch.compile
    it is the model itself: `compiled()` places the kernels into the compiled graph."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.kernels = swapped()  # made once, outside anything torch.compile traces
        # not a submodule: the model's parameters once in the state dict
        object.__setattr__(self, "graph", op_calls.eager_graph(model, EAGER) if CHAINED else None)

    def forward(self, *args, **kwargs):
        if torch.compiler.is_compiling():
            return self.model(*args, **kwargs)
        if self.graph is not None:
            return self.graph(*args, **kwargs)
        with self.kernels:
            return self.model(*args, **kwargs)


def dry(model):
    """`model` through the eager swap with no kernel run (each check made, the original run): its own cost."""
    if CHAINED:
        return op_calls.eager_graph(model, [])
    idle = op_calls.CallSwap(EAGER, dry=True)

    def through(*args, **kwargs):
        with idle:
            return model(*args, **kwargs)

    return through


def swap(model):
    return Swapped(model)


def compiled(model, **kwargs):
    """`torch.compile(model, **kwargs)` with the kernels that beat the compiled op placed into its graph (an
    Inductor pre-grad pass over Dynamo's graph); Inductor compiles and fuses the rest as it would."""
    options = dict(kwargs.pop("options", None) or {{}})
    options["pre_grad_custom_pass"] = GRAPH_PASS
    return torch.compile(model, options=options, **kwargs)


def counts():
    """(kernel, calls it ran, calls of its function that fell back to the original) in eager mode."""
    return [(k.spec["name"], k.hits, k.fallbacks) for k in EAGER]
'''.replace("{module}", MODULE_NAME)
