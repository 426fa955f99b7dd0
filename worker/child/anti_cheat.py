"""Checks that a candidate does the work itself and does not game the test or the timer: the one set that
`cudalens test`, the save-time test and the optimize loop all apply.

After KernelBench's `kernel_static_checker.py` (try/except fallbacks, inheritance bypass, torch compute ops,
side streams, threads, lazy tensors, timing monkey-patches, precision downgrades), but on the Python AST of
`ModelNew` rather than regular expressions over the whole file, so a comment or the reference `Model` does not
trip it, plus checks KernelBench leaves to run time: returning an input or a constant, and keeping state across
calls (cached outputs). The test job adds the run-time side with the same findings and codes: inputs changed
by the candidate or outputs sharing their memory (harness_correctness), clocks replaced (lib/clock_guard.py).

Each check belongs to one rule code (`CHECK_CODES`, codes from analysis/codes.py, documented there). Suppression
comments do not apply: a candidate that wants to cheat would write them too.

Standard library only, and nothing else of ours but results.py (worker/child/__init__.py says why).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from .results import CheatFinding

# check → rule code. CL901: the test cannot run at all (no ModelNew, no forward).
CHECK_CODES = {
    "timed-output-wrong": "CL901",
    "not-reproduced": "CL901",
    "timing-patch": "CL906",
    "below-physical-bound": "CL906",
    "clock-replaced": "CL906",
    "torch-replaced": "CL906",
    "side-stream": "CL906",
    "threads": "CL906",
    "torch-fallback": "CL907",
    "library-kernels": "CL907",
    "try-except-fallback": "CL907",
    "calls-reference": "CL907",
    "inherits-reference": "CL907",
    "no-custom-kernel": "CL907",
    "inputs-modified": "CL908",
    "output-aliases-input": "CL908",
    "returns-input": "CL909",
    "returns-constant": "CL909",
    "cached-output": "CL909",
    "lazy-tensor": "CL909",
    "precision-downgrade": "CL911",
    "missing-model-new": "CL901",
    "missing-forward": "CL901",
}


def finding(check: str, message: str, line: int, severity: str = "reject") -> CheatFinding:
    """A finding of `check`, with its rule code."""
    return CheatFinding(check, message, line, severity, CHECK_CODES[check])  # type: ignore[arg-type]


TORCH_COMPUTE = frozenset(
    """mm bmm matmul einsum addmm baddbmm conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d
    avg_pool1d avg_pool2d avg_pool3d max_pool1d max_pool2d max_pool3d adaptive_avg_pool1d adaptive_avg_pool2d
    adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d relu hardtanh elu selu
    leaky_relu gelu softsign softplus softmax log_softmax tanh sigmoid hardsigmoid silu mish batch_norm group_norm
    layer_norm instance_norm rms_norm normalize linear cross_entropy kl_div mse_loss huber_loss
    triplet_margin_loss cosine_similarity logsumexp clamp dropout sum mean prod cumsum cumprod max min amax amin
    argmax argmin exp log var std norm sort topk scaled_dot_product_attention""".split()
)
# nn.Module containers and parameters are structure, not compute
NN_STRUCTURE = frozenset(
    {
        "Module",
        "Parameter",
        "ParameterList",
        "ParameterDict",
        "ModuleList",
        "ModuleDict",
        "init",
        "parameter",
        "Buffer",
    }
)
CONSTANT_FACTORIES = frozenset(
    {
        "zeros",
        "ones",
        "empty",
        "full",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "tensor",
        "rand",
        "randn",
        "rand_like",
        "randn_like",
    }
)
TIMERS = (
    "torch.cuda.synchronize",
    "torch.cuda.Event",
    "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time",
    "time.perf_counter",
    "time.time",
    "time.monotonic",
)
FP16_DOWNGRADE = re.compile(
    r"__float2half(_rn)?\s*\(|static_cast\s*<\s*(__half|half)\s*>|\.half\s*\(\s*\)|\.to\s*\(\s*(dtype\s*=\s*)?"
    r"torch\.(float16|half)\b"
)


@dataclass(frozen=True)
class AntiCheatPolicy:
    require_custom_kernel: bool = True  # the file must define and build a CUDA kernel
    allow_torch_compute: bool = False  # may ModelNew.forward call torch's compute ops for the main work?
    reference_dtype: str = "fp32"  # an fp32 problem computed in fp16 is flagged (a warning)

    @classmethod
    def for_test(cls, source: str, allow_torch_ops: bool = False, reference_dtype: str = "fp32") -> AntiCheatPolicy:
        """The policy of `cudalens test` and the save-time test, which see the user's own file: a file with no
        CUDA kernel is a PyTorch candidate and may use torch's ops; once it defines a kernel, ModelNew's results
        must come from it (a kernel launched beside torch's result is the cheat)."""
        return cls(False, allow_torch_ops or not defines_kernel(source), reference_dtype)


def defines_kernel(source: str) -> bool:
    """A `__global__` function outside `//` comments."""
    return "__global__" in _without_line_comments(source)


def _without_line_comments(source: str) -> str:
    return "\n".join(line.split("//")[0] for line in source.splitlines())


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    return ".".join(reversed(parts))


def _is_torch_compute(name: str, aliases: dict[str, str]) -> bool:
    head, _, rest = name.partition(".")
    full = f"{aliases.get(head, head)}.{rest}" if rest else aliases.get(head, head)
    if full.startswith(("torch.nn.functional.", "torch.special.", "torch.linalg.", "torch.fft.")):
        return True
    if full.startswith("torch.nn."):
        return full.split(".")[2] not in NN_STRUCTURE
    if full.startswith("torch."):
        return full.split(".", 1)[1] in TORCH_COMPUTE
    return False


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local names of torch modules: `import torch.nn.functional as F` → {"F": "torch.nn.functional"}."""
    found = {"torch": "torch"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                found[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("torch"):
            for a in node.names:
                found[a.asname or a.name] = f"{node.module}.{a.name}"
    return found


def check_candidate(
    source: str, policy: AntiCheatPolicy | None = None, parse: Callable[[str], ast.AST] = ast.parse
) -> list[CheatFinding]:
    """Everything suspicious about one candidate file; any `reject` finding disqualifies it. `parse`: where
    several threads parse at once (the search's branches), one that takes turns (cudalens.analysis.python_ast);
    the worker parses in one thread."""
    policy = policy or AntiCheatPolicy()
    try:
        tree = parse(source)
    except SyntaxError:
        return []  # the evaluator reports it as a compile error with the line
    aliases = _aliases(tree)
    found: list[CheatFinding] = []
    found += _module_wide(tree, source, policy)
    model_new = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"), None)
    if model_new is None:
        found.append(finding("missing-model-new", "the candidate defines no class ModelNew", 0))
        return found
    found += _class_checks(model_new, tree, aliases, policy)
    return sorted(set(found), key=lambda f: (f.line, f.check))


def rejected(findings: list[CheatFinding]) -> list[CheatFinding]:
    return [f for f in findings if f.severity == "reject"]


def _module_wide(tree: ast.Module, source: str, policy: AntiCheatPolicy) -> list[CheatFinding]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(n.split(".")[0] in ("threading", "multiprocessing", "concurrent") for n in names):
                found.append(
                    finding(
                        "threads",
                        "imports threading/multiprocessing: work can run outside the timed region",
                        node.lineno,
                    )
                )
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if _dotted(t) in TIMERS:
                    found.append(
                        finding(
                            "timing-patch", f"reassigns {_dotted(t)} (timing manipulation)", node.lineno
                        )
                    )
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if (
                name == "setattr"
                and node.args
                and _dotted(node.args[0]) in ("torch.cuda", "time", "torch.cuda.Event")
            ):
                found.append(
                    finding(
                        "timing-patch", "setattr on torch.cuda/time (timing manipulation)", node.lineno
                    )
                )
            elif name.endswith(("cuda.Stream", "cuda.stream")) or name.endswith(
                (".wait_stream", ".record_stream")
            ):
                found.append(
                    finding(
                        "side-stream",
                        f"{name}(): work on a side stream escapes the timed default stream",
                        node.lineno,
                    )
                )
            elif name.endswith("_make_subclass"):
                found.append(
                    finding(
                        "lazy-tensor",
                        "Tensor._make_subclass: a lazy tensor can pass the test without computing",
                        node.lineno,
                    )
                )
        elif isinstance(node, ast.ClassDef) and any(
            _dotted(b) in ("torch.Tensor", "Tensor") for b in node.bases
        ):
            found.append(
                finding("lazy-tensor", f"class {node.name} subclasses torch.Tensor", node.lineno)
            )
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                if _dotted(d.func if isinstance(d, ast.Call) else d).split(".")[-1] in ("lru_cache", "cache"):
                    found.append(
                        finding(
                            "cached-output",
                            f"{node.name} is memoized: outputs can be reused across calls",
                            node.lineno,
                        )
                    )
    if policy.require_custom_kernel:
        code = _without_line_comments(source)
        if "__global__" not in code or not re.search(r"load_inline|cpp_extension|RawKernel|RawModule", code):
            found.append(
                finding(
                    "no-custom-kernel",
                    "no CUDA kernel is defined and built (__global__ with load_inline / cpp_extension)",
                    0,
                )
            )
    if policy.reference_dtype == "fp32":
        m = FP16_DOWNGRADE.search(source)
        if m:
            line = source.count("\n", 0, m.start()) + 1
            found.append(
                finding("precision-downgrade", "computes an fp32 problem in fp16", line, "warn")
            )
    return found


def _class_checks(
    cls: ast.ClassDef, tree: ast.Module, aliases: dict[str, str], policy: AntiCheatPolicy
) -> list[CheatFinding]:
    found = []
    if any(_dotted(b) == "Model" for b in cls.bases):
        found.append(
            finding("inherits-reference", "ModelNew inherits from the reference Model", cls.lineno)
        )
    reference_attrs: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Try):
            found.append(
                finding(
                    "try-except-fallback",
                    "try/except in ModelNew: a failing kernel can fall back to PyTorch unseen",
                    node.lineno,
                )
            )
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _dotted(node.value.func) == "Model"
        ):
            reference_attrs |= {_dotted(t) for t in node.targets}
            found.append(finding("calls-reference", "ModelNew builds the reference Model", node.lineno))
        elif isinstance(node, ast.Call) and not policy.allow_torch_compute:
            name = _dotted(node.func)
            if _is_torch_compute(name, aliases):
                found.append(
                    finding(
                        "torch-fallback", f"{name}() does the work in PyTorch, not in the kernel", node.lineno
                    )
                )
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.MatMult)
            and not policy.allow_torch_compute
        ):
            found.append(
                finding("torch-fallback", "the @ operator does the work in PyTorch", node.lineno)
            )
    forward = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        found.append(finding("missing-forward", "ModelNew has no forward()", cls.lineno))
        return found
    params = {a.arg for a in forward.args.args[1:]} | {a.arg for a in forward.args.kwonlyargs}
    if forward.args.vararg:
        params.add(forward.args.vararg.arg)
    for node in ast.walk(forward):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if (
                name in ("super().forward", "Model.forward")
                or name in {f"{a}.forward" for a in reference_attrs}
                or name in reference_attrs
            ):
                found.append(
                    finding("calls-reference", f"forward calls the reference ({name})", node.lineno)
                )
        elif isinstance(node, ast.Return) and node.value is not None:
            found += _return_checks(node, params, aliases)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                base = t.value if isinstance(t, (ast.Attribute, ast.Subscript)) else None
                if base is not None and (
                    _dotted(base).startswith("self")
                    or (
                        isinstance(t, ast.Subscript)
                        and isinstance(base, ast.Name)
                        and base.id not in params
                        and not _assigned_in(forward, base.id)
                    )
                ):
                    found.append(
                        finding(
                            "cached-output",
                            "forward stores state that outlives the call "
                            f"({ast.unparse(t)}): outputs can be cached across calls",
                            node.lineno,
                        )
                    )
    return found


def _assigned_in(fn: ast.FunctionDef, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(fn)
    )


def _return_checks(node: ast.Return, params: set[str], aliases: dict[str, str]) -> list[CheatFinding]:
    value = node.value
    if isinstance(value, ast.Name) and value.id in params:
        return [
            finding("returns-input", f"forward returns its input '{value.id}' unchanged", node.lineno)
        ]
    if isinstance(value, ast.Constant):
        return [finding("returns-constant", "forward returns a constant", node.lineno)]
    if isinstance(value, ast.Call):
        name = _dotted(value.func)
        head, _, last = name.rpartition(".")
        if aliases.get(head, head) == "torch" and last in CONSTANT_FACTORIES:
            return [
                finding(
                    "returns-constant", f"forward returns {name}(): a constant, not a result", node.lineno
                )
            ]
    return []
