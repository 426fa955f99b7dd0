"""The program ncu and compute-sanitizer watch: builds a file's candidate and calls it on seeded inputs.

`python profile_target.py PAYLOAD.json` (payload as for the `test` job, plus "reps", and "inputs": "small" for
the smallest inputs the reference accepts: lib/small_inputs.py; the sanitizers ask for them). "reps": 0
builds and stops there: no input is made and nothing goes to the GPU. Builds happen
before the first launch, so with `--target-processes application-only` nvcc is never profiled. What it ran is
announced on stderr (`cudalens-inputs: {json}`). Exit status 0 when the calls returned, 1 (one line on stderr)
when they raised. Standard library at top level.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..lib import fast_inline, harness_correctness, problem_loader, small_inputs


def announce_build_dirs(module_names: list[str]) -> None:
    """Where load_inline wrote the generated `cuda.cu`: tools such as compute-sanitizer report its lines by bare
    file name, and the parent maps them back to the user's file by content."""
    from torch.utils import cpp_extension

    for name in module_names:
        try:
            folder = cpp_extension._get_build_directory(name, verbose=False)
        except Exception:  # a private helper: fall back to the documented default location
            folder = str(Path(cpp_extension.get_default_build_root()) / name)
        print(f"cudalens-build-dir: {folder}", file=sys.stderr)


@contextlib.contextmanager
def _profiled(torch: Any, device: Any) -> Iterator[None]:
    """Only the candidate's calls between cudaProfilerStart and Stop: what a standby ncu
    (`--profile-from-start off`) profiles; a tool watching from the start ignores the two calls."""
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
        _quietly(torch.cuda.profiler.start)
    try:
        yield
    finally:
        if cuda:
            torch.cuda.synchronize(device)
            _quietly(torch.cuda.profiler.stop)


def _quietly(call: Any) -> None:
    try:
        call()
    except Exception:  # no profiler attached may read as an error on some drivers: nothing to start then
        pass


def _problem(payload: dict, device: Any) -> Any:
    """The problem at full size, or (payload "inputs": "small") at the smallest sizes its reference accepts;
    `problem.inputs_how` says which."""
    if payload.get("inputs") != "small":
        return problem_loader.load_problem(payload)
    problem, how, reduced = small_inputs.load_small(payload)
    refused = small_inputs.accepted(problem, device) if reduced else None
    if refused is not None:
        problem = problem_loader.load_problem(payload)
        how = f"full size: the reference does not accept the reduced sizes ({how}): {refused}"
    problem.inputs_how = how
    return problem


def main(argv: list[str]) -> int:
    if argv[:1] == ["--standby"]:  # a warm target (profiler/ncu/standby.py): the slow start first, then wait
        import torch

        if torch.cuda.is_available():
            torch.zeros(1, device="cuda")
            torch.cuda.synchronize()
        line = sys.stdin.readline().strip()
        if not line:
            return 0  # the parent went away: nothing to run
        argv = [line]
    return run_target(json.loads(Path(argv[0]).read_text()))


def run_target(payload: dict) -> int:
    """What `main` runs for a payload: 0 when the calls returned, 1 (one line on stderr) when they raised. The
    `build_ahead` job calls it in a child forked from a worker that has imported torch."""
    try:
        import torch

        device = torch.device(payload.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
        problem = _problem(payload, device)
        made = problem.make_candidate()
        announce_build_dirs(problem.module_names)  # after make_candidate: a .cu file is built there
        for folder in fast_inline.BUILD_DIRS:
            print(f"cudalens-build-dir: {folder}", file=sys.stderr)
        if int(payload.get("reps", 1)) == 0:
            # a build ahead (profiler/prebuild.py): nothing placed on the GPU and no inputs made, so it never
            # shares the GPU with a candidate timed meanwhile (a search builds ahead while its GPU times another)
            return 0
        candidate = harness_correctness.place(made, device, None)
        torch.manual_seed(int(payload.get("seed", 42)))
        inputs = harness_correctness.make_inputs(problem.get_inputs, device)
        shapes = [list(x.shape) for x in inputs if isinstance(x, torch.Tensor)]
        print("cudalens-inputs: " + json.dumps({"how": problem.inputs_how, "shapes": shapes}), file=sys.stderr)
        with torch.no_grad(), _profiled(torch, device):
            for _ in range(int(payload.get("reps", 1))):
                candidate(*inputs)
    except Exception as exc:
        print(f"cudalens profile target: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 0

