"""The whole model with its kernels swapped in (`cudalens model --integrate`): the outputs against the
original's (tolerances by dtype, harness_correctness.compare; fp32 convolutions and matrix products without
TF32 while they are compared, `ieee_fp32`), then both timed (harness_timing.measure), in
eager mode and, unless `compile` is false, under torch.compile (there against the compiled original). In each
mode only the kernels decided for it run (the module's SPECS "modes"): eager through `swap`, compiled through
`compiled`, which places them into the compiled graph; a mode with none is timed before only.

Payload: path, entry, device, integration (the generated module's path), compile, budget_ms, atol, rtol.
Result: checks (OutputCheck JSON per output), passed, kernels ([name, hits, fallbacks]), timings
({"eager" | "compiled": {"before", "after" | None}} of Measurement JSON), mode_only (eager, through the swap's
checks with no kernel run: its own cost), compiled_checks, compiled_passed, replaced (calls of the compiled graphs run as a
kernel), seconds (each stage's wall time).
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from ..lib import harness_correctness as correctness
from ..lib import harness_timing as timing
from ..lib import model_entry as entry
from ..lib import problem_loader
from ..lib.jobkit import load_by_path


@contextlib.contextmanager
def ieee_fp32() -> Any:
    """fp32 convolutions and matrix products in full precision while outputs are compared, whatever the model's
    settings (cuDNN's convolutions are TF32 by default). A kernel that differs from PyTorch's op in the last bit
    of its fp32 result moves a TF32 convolution after it by TF32's rounding step: the diffusion block on the
    H200 showed 86 of 4.2 M outputs 2.7e-4 off, and its CPU copy with TF32-rounded convolutions shows 79 of 1 M
    2.1e-4 off where fp32 ones give 5.4e-7 (tests/model/test_whole_model_precision.py). Timings keep the model's
    settings."""
    import torch

    # the legacy switches: torch's newer per-backend precisions, set for convolutions alone, make any read of
    # the legacy `cudnn.allow_tf32` raise (conv and RNN differ), and Inductor reads it; a model that set the
    # newer ones that way already gets the newer ones
    sites: list[tuple[Any, str]] = [(torch.backends.cudnn, "allow_tf32"), (torch.backends.cuda.matmul, "allow_tf32")]
    value: Any = False
    try:
        saved = [getattr(owner, name) for owner, name in sites]
    except RuntimeError:
        sites = [(torch.backends.cudnn.conv, "fp32_precision"), (torch.backends.cuda.matmul, "fp32_precision")]
        value, saved = "ieee", [getattr(owner, name) for owner, name in sites]
    try:
        for owner, name in sites:
            setattr(owner, name, value)
        yield
    finally:
        for (owner, name), old in zip(sites, saved, strict=True):
            setattr(owner, name, old)


def run(payload: dict, ctx: Any = None) -> dict:
    import torch

    seconds: dict[str, float] = {}  # each stage's wall time: where a model's verification goes
    last: list[Any] = ["building the model", time.perf_counter()]

    def stage(message: str | None, fraction: float | None = None) -> None:
        now = time.perf_counter()
        seconds[last[0]] = round(now - last[1], 2)
        last[:] = [message, now]
        if ctx is not None and message is not None:
            ctx.progress(message, fraction)

    try:
        built, device = entry.from_payload(payload)
    except entry.EntryError as exc:
        return {"error": str(exc)}
    path = Path(payload["integration"])
    kernels = load_by_path("cudalens_integration_" + str(abs(hash(str(path)))), path, fresh=True)  # written anew each run
    fast = kernels.swap(built.model)
    atol, rtol = payload.get("atol"), payload.get("rtol")

    def checks(model: Any, reference: Any = None) -> list[Any]:
        expected = correctness.flatten(reference(*built.args, **built.kwargs) if reference is not None else built())
        actual = correctness.flatten(model(*built.args, **built.kwargs))
        if len(actual) != len(expected):
            return [correctness.results.OutputCheck(0, False, "count",
                                                    f"{len(actual)} outputs, expected {len(expected)}")]
        return [correctness.compare(i, e, a, atol, rtol) for i, (e, a) in enumerate(zip(expected, actual, strict=True))]

    out: dict[str, Any] = {"device": device, "timings": {}}
    # compiled afresh: a cached compile of the same kernels skips the graph pass, and `replaced` would say 0
    fresh = contextlib.nullcontext()
    if payload.get("compile", True):
        import torch._inductor.config

        fresh = torch._inductor.config.patch(force_disable_caches=True)
    # the candidates' load_inline builds by content, through the fast path: the test that accepted a kernel
    # built it so, and this finds it built (torch's own load_inline: a cold build, ~60 s on the H200's host)
    with torch.no_grad(), fresh, problem_loader.content_addressed_builds():
        stage("comparing the outputs", 0.1)
        with ieee_fp32():
            eager = checks(fast)
        out["checks"] = [c.to_json() for c in eager]
        out["passed"] = all(c.passed for c in eager)
        out["kernels"] = [list(c) for c in kernels.counts()]
        clock = timing.make_clock(device)
        budget = float(payload.get("budget_ms", 200.0))
        sides = {"eager": (built.model, fast if kernels.EAGER else None)}
        if payload.get("compile", True):
            stage("compiling both models", 0.4)
            with_kernels = kernels.GRAPH_PASS.kernels
            sides["compiled"] = (torch.compile(built.model), kernels.compiled(built.model) if with_kernels else None)
            if with_kernels:
                # against the compiled model without kernels: inductor's own numerics differ from eager
                # (ResNet-50 on the H200: 0.0186 off at 1e-4), and the question is what the kernels change
                with ieee_fp32():
                    compiled = checks(sides["compiled"][1], sides["compiled"][0])
                out["compiled_checks"] = [c.to_json() for c in compiled]
                out["compiled_passed"] = all(c.passed for c in compiled)
            out["replaced"] = kernels.GRAPH_PASS.replaced
        for kind, (before, after) in sides.items():
            stage(f"timing the model, {kind}", 0.7)
            out["timings"][kind] = {
                label: None if model is None else timing.measure(
                    lambda m=model: m(*built.args, **built.kwargs), f"{kind} {label}", clock, budget_ms=budget).to_json()
                for label, model in (("before", before), ("after", after))
            }
        if kernels.EAGER:
            # what the swap costs by itself in eager mode: each check made (a call of a swapped function, or
            # Dynamo's guards and graph), then the original
            through_swap = kernels.dry(built.model)
            stage("timing the model through the swap's checks alone", 0.9)
            out["mode_only"] = timing.measure(lambda: through_swap(*built.args, **built.kwargs),
                                              "eager, the swap's checks without kernels", clock,
                                              budget_ms=budget).to_json()
    stage(None)
    out["seconds"] = seconds
    return out


