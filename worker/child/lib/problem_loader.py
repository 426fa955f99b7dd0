"""Turns a user's file into something the harnesses can run: a reference model, a candidate, inputs.

Two file shapes (docs/testing.md):
- a KernelBench file: `Model`, `get_inputs`, `get_init_inputs` and `ModelNew` in one `.py`, or a solution
  `.py` with `ModelNew` whose problem file is named by `# cudalens: reference=problem.py` or passed in;
- a `.cu` file with torch host functions (`torch::Tensor f(torch::Tensor x)`), its reference in
  `// cudalens: reference=file.py` or the sibling `<stem>_ref.py`, which defines `Model`, `get_inputs`,
  `get_init_inputs` and optionally `FUNCTION = "f"` and `def call(ext, *inputs)`.

Standard library at top level; torch is imported inside functions (the job-module contract).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import failed_builds, fast_inline
from .jobkit import load_by_path

_DIRECTIVE = re.compile(r"(?://|#)\s*cudalens:\s*reference\s*=\s*(\S+)")
_GLOBAL_KERNEL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)")
_HOST_FUNCTION = re.compile(
    r"^[ \t]*((?:torch|at)::Tensor|std::vector<\s*(?:torch|at)::Tensor\s*>|void)\s+(\w+)\s*\(([^)]*)\)\s*\{",
    re.MULTILINE,
)


_DEFAULT = re.compile(r"\s*=.*$")


class ProblemError(Exception):
    """The file does not have what a test needs; the message says what is missing, in one line."""


@dataclass
class Problem:
    path: str
    reference_path: str
    make_reference: Callable[[], Any]  # → a callable module (Model(*get_init_inputs()))
    make_candidate: Callable[[], Any]  # → a callable (ModelNew(...) or the .cu's host function)
    get_inputs: Callable[[], list]
    kernel_names: list[str] = field(default_factory=list)
    module_names: list[str] = field(default_factory=list)  # load_inline extension names built for it
    reference_module: Any = None  # the module defining Model (small_inputs.py reads its hooks)
    candidate_module: Any = None  # the module defining ModelNew (None for a .cu file)
    inputs_how: str = "full size"  # what get_inputs makes: "full size", or how small_inputs.py reduced it


def kernel_names(text: str) -> list[str]:
    """`__global__` function names in CUDA or Python text, first occurrence order."""
    return list(dict.fromkeys(_GLOBAL_KERNEL.findall(text)))


def host_functions(cuda_text: str) -> list[tuple[str, str]]:
    """(name, declaration) of the torch host functions in a .cu text, skipping `__device__`/`__global__` ones."""
    out = []
    for m in _HOST_FUNCTION.finditer(cuda_text):
        before = cuda_text[: m.start()].split()
        if before and before[-1] in ("__global__", "__device__"):  # qualifiers on the line above
            continue
        # a declaration repeating the definition's default arguments would not compile: keep them only there
        params = ", ".join(_DEFAULT.sub("", p).strip() for p in " ".join(m.group(3).split()).split(",") if p.strip())
        out.append((m.group(2), f"{m.group(1)} {m.group(2)}({params});"))
    return out


def reference_for(path: Path, text: str, given: str | None) -> Path | None:
    """The reference file: the one given, else the file's directive, else `<stem>_ref.py`/`<stem>.ref.py`."""
    if given:
        return Path(given).expanduser().resolve()
    m = _DIRECTIVE.search(text)
    if m:
        return (path.parent / m.group(1)).resolve()
    for candidate in (path.with_name(path.stem + "_ref.py"), path.with_name(path.stem + ".ref.py")):
        if candidate.exists():
            return candidate.resolve()
    return None


def content_name(name: str, cpp_sources: Any, cuda_sources: Any, options: dict[str, Any]) -> str:
    """A load_inline extension name that changes with everything that is compiled into it."""
    blob = repr((cpp_sources, cuda_sources, sorted((k, repr(v)) for k, v in options.items() if k != "verbose")))
    return f"{name}_{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


@contextlib.contextmanager
def content_addressed_builds() -> Iterator[None]:
    """While a user's module runs, its `load_inline` builds are named by their content.

    torch re-versions a name that is loaded again with other sources in the same process (`relu_v1`) and
    rebuilds; a second process (the ncu or sanitizer target) then finds the first name's folder holding other
    sources and rebuilds again. On the H200 that was two cold builds, ~110 s, per optimize round. Named by
    content, each distinct source is built once and every later load, in any process, reuses it."""
    try:
        from torch.utils import cpp_extension
    except ImportError:  # no torch: nothing to build
        yield
        return
    original = cpp_extension.load_inline

    @functools.wraps(original)
    def load_inline(name: str, cpp_sources: Any, cuda_sources: Any = None, *args: Any, **kwargs: Any) -> Any:
        key = content_name(name, cpp_sources, cuda_sources, {"args": args, **kwargs})
        return built_fast_or_else(original, name, key, cpp_sources, cuda_sources, *args, **kwargs)

    cpp_extension.load_inline = load_inline
    try:
        yield
    finally:
        cpp_extension.load_inline = original


def built_fast_or_else(original: Callable[..., Any], fast_name: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """The fast split build under `fast_name` (docs/fast-builds.md); where it declines or fails, torch's
    load_inline under `name`, whose messages are the ones a user should see."""
    root = fast_inline.build_root()
    if (message := failed_builds.remembered(root, name)) is not None:
        fast_inline.LOG.append(f"failed before {fast_name}: not compiled again")
        raise RuntimeError(f"{message}\n{failed_builds.NOTE}")
    try:
        return fast_inline.fast_load_inline(original, fast_name, *args, **kwargs)
    except fast_inline.Declined as exc:
        fast_inline.LOG.append(f"declined {fast_name}: {exc}")
    except Exception as exc:  # a compile error, or a torch whose private helpers differ
        fast_inline.LOG.append(f"fell back {fast_name}: {type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[-1][:200]}")
    try:
        return original(name, *args, **kwargs)
    except Exception as exc:
        failed_builds.remember(root, name, exc)
        raise


Rewrite = Callable[[Path, str], str]


def load_module(path: Path, rewrite: Rewrite | None = None) -> Any:
    """Executes a user's Python file as a fresh module (its load_inline builds run now, content-addressed).
    `rewrite(path, source)`: the source to run instead (small_inputs.py runs a reference with smaller sizes)."""
    key = "_cudalens_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]  # two problems never collide
    source = None if rewrite is None else rewrite(path, path.read_text(encoding="utf-8", errors="replace"))
    with content_addressed_builds():
        try:
            return load_by_path(key, path, fresh=True, source=source)
        except ImportError as exc:
            if exc.name == key:  # not a file Python can load (its suffix), as opposed to an import inside it
                raise ProblemError(str(exc)) from None
            raise


def _need(module: Any, names: tuple[str, ...], path: Path) -> None:
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        raise ProblemError(f"{path.name} lacks {', '.join(missing)} (a reference defines Model, get_inputs, get_init_inputs)")


def _seeded(seed: int, factory: Callable[[], Any]) -> Any:
    import torch

    torch.manual_seed(seed)  # the same weights for Model and ModelNew, as KernelBench does
    return factory()


def load_problem(payload: dict, rewrite: Rewrite | None = None) -> Problem:
    """The problem of `payload["path"]`; `rewrite` applies to the reference's source (see `load_module`)."""
    path = Path(payload["path"]).expanduser().resolve()
    if not path.exists():
        raise ProblemError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix in (".cu", ".cuh"):
        return _cuda_problem(path, text, payload, rewrite)
    return _kernelbench_problem(path, text, payload, rewrite)


def with_init_inputs(problem: Problem, payload: dict, init: Callable[[], list]) -> Problem:
    """The problem with both models built from `init()` instead of `get_init_inputs()`."""
    seed = int(payload.get("seed", 42))
    reference, candidate = problem.reference_module, problem.candidate_module
    out = replace(problem, make_reference=lambda: _seeded(seed, lambda: reference.Model(*init())))
    if candidate is not None:
        out = replace(out, make_candidate=lambda: _seeded(seed, lambda: candidate.ModelNew(*init())))
    return out


def _kernelbench_problem(path: Path, text: str, payload: dict, rewrite: Rewrite | None) -> Problem:
    # a file with its own Model is its own reference, so the rewrite applies to it too (it changes only what
    # the file's get_inputs/get_init_inputs read)
    module = load_module(path, rewrite)
    if not hasattr(module, "ModelNew"):
        raise ProblemError(f"{path.name} defines no ModelNew: nothing to test against the reference")
    ref_path = path
    reference = module
    if not all(hasattr(module, n) for n in ("Model", "get_inputs", "get_init_inputs")):
        found = reference_for(path, text, payload.get("reference"))
        if found is None:
            raise ProblemError(
                f"{path.name} has ModelNew but no Model/get_inputs: name the problem file with "
                "`# cudalens: reference=problem.py` or --reference"
            )
        reference = load_module(found, rewrite)
        ref_path = found
    _need(reference, ("Model", "get_inputs", "get_init_inputs"), ref_path)
    seed = int(payload.get("seed", 42))
    init = reference.get_init_inputs
    return Problem(
        path=str(path),
        reference_path=str(ref_path),
        make_reference=lambda: _seeded(seed, lambda: reference.Model(*init())),
        make_candidate=lambda: _seeded(seed, lambda: module.ModelNew(*init())),
        get_inputs=reference.get_inputs,
        kernel_names=kernel_names(text),
        reference_module=reference,
        candidate_module=module,
    )


def _cuda_problem(path: Path, text: str, payload: dict, rewrite: Rewrite | None) -> Problem:
    ref_path = reference_for(path, text, payload.get("reference"))
    if ref_path is None or not ref_path.exists():
        raise ProblemError(
            f"{path.name} has no PyTorch reference: add {path.stem}_ref.py next to it (Model, get_inputs, "
            "get_init_inputs) or a `// cudalens: reference=file.py` line"
        )
    reference = load_module(ref_path, rewrite)
    _need(reference, ("Model", "get_inputs", "get_init_inputs"), ref_path)
    functions = host_functions(text)
    wanted = getattr(reference, "FUNCTION", None)
    if wanted:
        functions = [f for f in functions if f[0] == wanted] or [(wanted, "")]
    if not functions:
        raise ProblemError(
            f"{path.name} has no torch host function to call (e.g. `torch::Tensor run(torch::Tensor x)`); "
            "see docs/testing.md"
        )
    name = functions[0][0]
    ext_name = build_name(path, text)
    seed = int(payload.get("seed", 42))
    init = reference.get_init_inputs

    def make_candidate() -> Any:
        ext = compile_cuda(ext_name, text, functions, payload)
        custom = getattr(reference, "call", None)
        if custom is not None:
            return lambda *inputs: custom(ext, *inputs)
        return getattr(ext, name)

    return Problem(
        path=str(path),
        reference_path=str(ref_path),
        make_reference=lambda: _seeded(seed, lambda: reference.Model(*init())),
        make_candidate=make_candidate,
        get_inputs=reference.get_inputs,
        kernel_names=kernel_names(text),
        module_names=[ext_name],
        reference_module=reference,
    )


def build_name(path: Path, text: str) -> str:
    """A load_inline name per content: an unchanged file reuses torch's build; an edited one never collides."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    return f"cudalens_{stem}_{digest}"


def compile_cuda(ext_name: str, text: str, functions: list[tuple[str, str]], payload: dict) -> Any:
    from torch.utils.cpp_extension import load_inline

    fast_name, kwargs = cuda_load_arguments(ext_name, text, functions, payload)
    if kwargs.get("build_directory"):
        Path(kwargs["build_directory"]).mkdir(parents=True, exist_ok=True)
    return built_fast_or_else(load_inline, fast_name, ext_name, **kwargs)


def cuda_load_arguments(ext_name: str, text: str, functions: list[tuple[str, str]],
                        payload: dict) -> tuple[str, dict[str, Any]]:
    """The fast build's name and load_inline's keyword arguments for a `.cu` file (compile_cuda; the build job's
    early start, before torch is imported, reads them too)."""
    kwargs: dict[str, Any] = dict(
        # prototypes only (load_inline includes torch/extension.h itself): the fast path's light bindings
        cpp_sources=["\n".join(d for _, d in functions if d)],
        cuda_sources=[text],
        functions=[n for n, _ in functions],
        extra_cuda_cflags=["-O3", "-lineinfo", *payload.get("extra_cuda_cflags", [])],
        verbose=False,
    )
    if payload.get("build_directory"):
        kwargs["build_directory"] = payload["build_directory"]
    # the file's name without the content hash: its bindings build is reused
    return ext_name.rsplit("_", 1)[0], kwargs
