"""Runs one KernelBench-shaped candidate against its PyTorch reference, in a child process.

Standalone on purpose: it imports only the standard library and torch, so it runs under the user's own
interpreter (the one with torch and CUDA). `worker_evaluator` starts it in its own process group with a timeout
and a scrubbed environment; it reads one JSON job on stdin and writes one JSON result line on stdout.

The job: {"reference": path, "candidate": path, "trials": 5, "seed": 42, "time_budget_ms": 200,
"build_root": path or null, "kind": "full" | "test" | "profile"}. Candidate output on stdout goes to stderr so it cannot forge
the result line.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
import time
import traceback


def _emit(result: dict, fd: int) -> None:
    with os.fdopen(fd, "w") as out:
        out.write(json.dumps(result) + "\n")


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_HEAVY_INCLUDE = re.compile(r"#\s*include\s*[<\"]torch/extension\.h[>\"]")
_TORCH_NAME_ERROR = re.compile(
    r"\b(torch|at|c10|pybind11|py)(::\w+)*\W.*(has no member|is undefined|not declared)|"
    r"(has no member|is not a member|is undefined|not declared).*\b(torch|at|c10|pybind11|py)\b"
)


def _light_cuda_sources(cuda_sources):
    """The CUDA text with torch/extension.h swapped for torch/types.h, or None when that cannot be right.

    load_inline puts the Python bindings in its generated main.cpp, so the .cu file needs only ATen's tensor API;
    torch/extension.h also drags in autograd, nn, optim and pybind11, which triples nvcc's front-end time."""
    texts = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources or [])
    joined = "\n".join(texts)
    if not _HEAVY_INCLUDE.search(joined) or "PYBIND11_MODULE" in joined:
        return None
    light = [_HEAVY_INCLUDE.sub("#include <torch/types.h>", t) for t in texts]
    return light[0] if isinstance(cuda_sources, str) else light


def _cache_load_inline(build_root: str, notes: list) -> None:
    """Keep load_inline builds across evaluations: the build folder is keyed by everything but the CUDA text,
    so ninja recompiles only the .cu file when a candidate changes only its kernels, and nothing at all when the
    same source is evaluated again. The .cu file is compiled against the light torch header when it can be."""
    from torch.utils import cpp_extension

    original = cpp_extension.load_inline

    def load_inline(name, cpp_sources, cuda_sources=None, *args, **kwargs):
        if kwargs.get("build_directory") is None:
            key = json.dumps(
                [
                    name,
                    cpp_sources,
                    kwargs.get("functions"),
                    kwargs.get("extra_cflags"),
                    kwargs.get("extra_cuda_cflags"),
                    kwargs.get("extra_include_paths"),
                    kwargs.get("extra_ldflags"),
                ],
                default=str,
            )
            folder = os.path.join(build_root, f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}")
            os.makedirs(folder, exist_ok=True)
            kwargs["build_directory"] = folder
        light = _light_cuda_sources(cuda_sources)
        if light is not None:
            try:
                module = original(name, cpp_sources, light, *args, **kwargs)
                notes.append("cuda sources built against torch/types.h")
                return module
            except Exception as exc:
                if not _TORCH_NAME_ERROR.search(str(exc)):
                    raise
                notes.append("cuda sources need torch/extension.h: rebuilt with it")
        return original(name, cpp_sources, cuda_sources, *args, **kwargs)

    cpp_extension.load_inline = load_inline


def _tensors(value):
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _tolerance(dtype) -> float:
    import torch

    return 1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4


def _seed(seed: int) -> None:
    import torch

    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def _to(device, values):
    import torch

    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def _compare(ref, out) -> tuple[bool, str, float, float]:
    import torch

    refs, outs = _tensors(ref), _tensors(out)
    if len(refs) != len(outs):
        return False, f"returned {len(outs)} tensors, the reference {len(refs)}", float("inf"), float("inf")
    worst_abs = worst_rel = 0.0
    for r, o in zip(refs, outs, strict=False):
        if tuple(r.shape) != tuple(o.shape):
            return (
                False,
                f"output shape {tuple(o.shape)}, expected {tuple(r.shape)}",
                float("inf"),
                float("inf"),
            )
        if not torch.isfinite(o).all() and torch.isfinite(r).all():
            return False, "output contains NaN or Inf", float("inf"), float("inf")
        rf, of = r.detach().double(), o.detach().double()
        diff = (rf - of).abs()
        worst_abs = max(worst_abs, float(diff.max()) if diff.numel() else 0.0)
        worst_rel = max(worst_rel, float((diff / rf.abs().clamp_min(1e-12)).max()) if diff.numel() else 0.0)
        tol = _tolerance(r.dtype)
        if not torch.allclose(of, rf, atol=tol, rtol=tol, equal_nan=False):
            return (
                False,
                f"output mismatch: max abs error {worst_abs:.3g} (tolerance {tol:g})",
                worst_abs,
                worst_rel,
            )
    return True, "", worst_abs, worst_rel


class _Clock:
    """CUDA events with an L2 flush before every repetition on a GPU; perf_counter on the CPU."""

    def __init__(self, device):
        import torch

        self.cuda = device.type == "cuda"
        if self.cuda:
            l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 50 * 2**20)
            self.flush_buffer = torch.empty(max(2 * l2, 2**20) // 4, dtype=torch.float32, device=device)
            self.event = torch.cuda.Event
            self.synchronize = torch.cuda.synchronize

    def measure(self, fn, budget_ms: float) -> list[float]:
        fn()  # warm call (and lazy init) before anything is timed
        if self.cuda:
            self.synchronize()
            start, end = self.event(enable_timing=True), self.event(enable_timing=True)
            start.record()
            fn()
            end.record()
            self.synchronize()
            once = max(start.elapsed_time(end), 1e-3)
        else:
            t0 = time.perf_counter()
            fn()
            once = max((time.perf_counter() - t0) * 1e3, 1e-3)
        reps = int(min(max(budget_ms / once, 5), 200))
        if not self.cuda:
            samples = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                samples.append((time.perf_counter() - t0) * 1e3)
            return samples
        starts = [self.event(enable_timing=True) for _ in range(reps)]
        ends = [self.event(enable_timing=True) for _ in range(reps)]
        for s, e in zip(starts, ends, strict=False):
            self.flush_buffer.zero_()
            s.record()
            fn()
            e.record()
        self.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=False)]


def run(job: dict) -> dict:
    import torch

    result: dict = {"device": "cpu", "versions": {"torch": torch.__version__, "cuda": torch.version.cuda}}
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        result["device"] = torch.cuda.get_device_name(device)
        major, minor = torch.cuda.get_device_capability(device)
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{major}.{minor}")  # one arch: a third of the build
    else:
        torch.set_num_threads(
            1
        )  # CPU timings: one thread, so a busy machine's thread pool does not decide them
    notes: list = []
    result["notes"] = notes
    if job.get("build_root"):
        _cache_load_inline(job["build_root"], notes)
    guarded = {
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.Event.record": torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
        "time.perf_counter": time.perf_counter,
    }

    t0 = time.perf_counter()
    try:
        reference = _load(job["reference"], "cudalens_reference")
        candidate = _load(job["candidate"], "cudalens_candidate")
    except BaseException as exc:  # a build or import failure is the candidate's compile result
        result["compile"] = {"ok": False, "log": _short_traceback(exc), "seconds": time.perf_counter() - t0}
        return result
    result["compile"] = {"ok": True, "log": "", "seconds": time.perf_counter() - t0}

    current = {
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.Event.record": torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
        "time.perf_counter": time.perf_counter,
    }
    patched = [name for name in guarded if current[name] is not guarded[name]]
    if patched:
        result["correctness"] = {
            "status": "failed",
            "message": f"the candidate replaces {', '.join(patched)} (timing manipulation)",
        }
        return result

    get_inputs = getattr(candidate, "get_inputs", None) or reference.get_inputs
    get_init_inputs = getattr(reference, "get_init_inputs", lambda: [])
    if not hasattr(candidate, "ModelNew"):
        result["correctness"] = {"status": "failed", "message": "the candidate defines no class ModelNew"}
        return result
    seed = int(job.get("seed", 42))
    trials = max(int(job.get("trials", 5)), 1)
    correctness = {
        "status": "passed",
        "trials": trials,
        "passed_trials": 0,
        "max_abs_error": 0.0,
        "max_rel_error": 0.0,
        "message": "",
        "warnings": [],
    }
    try:
        with torch.no_grad():
            _seed(seed)
            init = _to(device, get_init_inputs())
            _seed(seed)
            model = reference.Model(*init).to(device).eval()
            _seed(seed)
            model_new = candidate.ModelNew(*init).to(device).eval()
            previous = None
            for trial in range(trials):
                _seed(seed + 1 + trial)
                inputs = _to(device, get_inputs())
                ref = model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                out = model_new(*inputs)
                if device.type == "cuda":
                    torch.cuda.synchronize()
                in_ptrs = {t.data_ptr() for t in _tensors(inputs)}
                if any(t.data_ptr() in in_ptrs for t in _tensors(out)) and not any(
                    t.data_ptr() in in_ptrs for t in _tensors(ref)
                ):
                    correctness.update(status="failed", message="ModelNew returns one of its inputs")
                    break
                if previous is not None and any(
                    a is b for a, b in zip(_tensors(out), previous, strict=False)
                ):
                    correctness.update(
                        status="failed",
                        message="ModelNew returns the same tensor object on every call (cached output)",
                    )
                    break
                previous = _tensors(out)
                if all(float(t.detach().abs().max()) < 1e-8 for t in _tensors(ref) if t.numel()):
                    msg = "the reference output is all zeros: correctness proves little"
                    if msg not in correctness["warnings"]:
                        correctness["warnings"].append(msg)
                ok, message, abs_err, rel_err = _compare(ref, out)
                correctness["max_abs_error"] = max(correctness["max_abs_error"], abs_err)
                correctness["max_rel_error"] = max(correctness["max_rel_error"], rel_err)
                if not ok:
                    correctness.update(status="failed", message=f"trial {trial + 1}/{trials}: {message}")
                    break
                correctness["passed_trials"] += 1
    except BaseException as exc:
        correctness.update(status="crashed", message=_last_line(exc), traceback=_short_traceback(exc))
    result["correctness"] = correctness
    if correctness["status"] != "passed" or job.get("kind") == "test":
        return result
    if job.get("kind") == "profile":  # under `ncu --profile-from-start off`: one warm call, one profiled call
        _seed(seed)
        inputs = _to(device, get_inputs())
        with torch.no_grad():
            model_new(*inputs)
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            model_new(*inputs)
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
        result["profiled"] = True
        return result

    _seed(seed)
    inputs = _to(device, get_inputs())
    clock = _Clock(device)
    budget = float(job.get("time_budget_ms", 200))
    with torch.no_grad():
        ref_samples = clock.measure(lambda: model(*inputs), budget)
        new_samples = clock.measure(lambda: model_new(*inputs), budget)
    result["timing"] = {"candidate": new_samples, "reference": ref_samples, "device": result["device"]}
    return result


def _last_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _short_traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:]


def main() -> None:
    result_fd = os.dup(1)
    os.dup2(2, 1)  # the candidate's prints (Python or C) land on stderr, never on the result channel
    job = json.loads(sys.stdin.readline())
    try:
        result = run(job)
    except BaseException as exc:
        result = {"error": _short_traceback(exc)}
    _emit(result, result_fd)
    sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown: a candidate's atexit hooks or threads must not hold the result


if __name__ == "__main__":
    main()
