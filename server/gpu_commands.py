"""`cudalens.runTests`, `cudalens.profile`, `cudalens.validate` (arguments `[uri, kernelName]`): the on-save steps
on demand, for the saved file. Each answers `{"ok", "message", ...}` and shows the message."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from cudalens.analysis.file_kinds import builds_cuda
from cudalens.profiler.gpu_specs import NoGpu
from cudalens.profiler.run_findings import has_test, no_gpu_message
from cudalens.profiler.validate import summarize, validate_file
from cudalens.server.command_runs import stage
from cudalens.server.documents import DocState
from cudalens.server.pipeline_on_save import LastRun, Plan
from cudalens.server.service import run_summary
from cudalens.server.trust import run_refusal

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer

logger = logging.getLogger("cudalens.server")

TEST_PLAN, PROFILE_PLAN = Plan(test=True, time=True), Plan(profile=True)

NO_TEST = ("nothing to test in {name}: a KernelBench file needs `Model`, `get_inputs` and `ModelNew`; a .cu "
           "needs a reference (`{stem}_ref.py` beside it, or a `// cudalens: reference=file.py` line)")


def answer(server: CudalensServer, ok: bool, message: str, **extra: Any) -> dict[str, Any]:
    server.window_show_message(types.ShowMessageParams(
        types.MessageType.Info if ok else types.MessageType.Warning, message
    ))
    return {"ok": ok, "message": message, **extra}


def target(server: CudalensServer, arguments: list[Any]) -> tuple[DocState | None, str | None, str]:
    """(the open document, the kernel name, why not) from `[uri, kernelName]`; the document must be saved, and
    the workspace trusted (these run its code)."""
    if why := run_refusal(server.service.trust):
        return None, None, why
    uri = arguments[0] if arguments else None
    kernel = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], str) else None
    if not isinstance(uri, str):
        return None, None, "cudalens: this command takes [uri, kernelName]"
    state = server.service.documents.get(uri)
    if state is None:
        return None, None, f"cudalens: {uri} is not an open CUDA or Python document"
    try:
        saved = Path(state.path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, None, f"cudalens: save {Path(state.path).name} first: the GPU runs the file on disk"
    if saved != state.text:
        return None, None, f"cudalens: save {Path(state.path).name} first: the GPU runs the file on disk"
    return state, kernel, ""


async def run_plan_now(server: CudalensServer, state: DocState, plan: Plan, kernel: str | None) -> LastRun | None:
    """The plan as the document's pipeline (an edit or the progress's cancel button stops it)."""
    service = server.service
    job = service.job_for(state, (kernel,) if kernel else ())
    task = service.pipelines.start(state.uri, service.run_plan(state, plan, job))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if task.cancelled():
            return None
        raise


async def _run(server: CudalensServer, arguments: list[Any], plan: Plan, what: str) -> dict[str, Any]:
    state, kernel, why = target(server, arguments)
    if state is None:
        return answer(server, False, why)
    name = Path(state.path).name
    if not has_test(state.path, state.text):
        return answer(server, False, "cudalens: " + NO_TEST.format(name=name, stem=Path(state.path).stem))
    gpu = await server.service.runtime.gpu()
    if isinstance(gpu, NoGpu) and needs_a_gpu(plan, state.path, state.text):  # said once, up front
        return answer(server, False, no_gpu_message(what, name, gpu.reason))
    run = await run_plan_now(server, state, plan, kernel)
    if run is None:
        return answer(server, False, f"cudalens: {what} {name} was cancelled or failed")
    ok = not run.notes and (run.test is None or run.test.passed) and (run.profile is None or not run.profile.error)
    return answer(
        server, ok, f"cudalens: {what} {name}: {run_summary(run)}",
        findings=[f.to_json() for f in run.findings],
        test=None if run.test is None else run.test.to_json(),
        timing=None if run.timing is None else run.timing.to_json(),
    )


def needs_a_gpu(plan: Plan, path: str, text: str) -> bool:
    """A profile always does; a test of CUDA code does (a pure-PyTorch `ModelNew` runs on the CPU)."""
    return plan.profile or builds_cuda(path, text)


async def run_tests(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    return await _run(server, arguments, TEST_PLAN, "testing")


async def profile(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    return await _run(server, arguments, PROFILE_PLAN, "profiling")


async def validate(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    state, _, why = target(server, arguments)
    if state is None:
        return answer(server, False, why)
    name = Path(state.path).name
    if not builds_cuda(state.path, state.text) or not state.path.endswith(".cu"):
        return answer(server, False, f"cudalens: validate compares a .cu file's hints with ncu; {name} is not one")
    gpu = await server.service.runtime.gpu()
    if isinstance(gpu, NoGpu):
        return answer(server, False, f"cudalens: validate needs a GPU ({gpu.reason})")
    worker = server.service.settings.worker
    loop = asyncio.get_running_loop()
    stage(f"compiling {name} and profiling it under ncu")
    result = await loop.run_in_executor(
        None, lambda: validate_file(state.path, python=worker.python, timeout=worker.timeout_seconds)
    )
    table = summarize([result]).table()
    notes = "".join(f"\n{n}" for n in result.notes)
    return answer(server, True, f"cudalens: validate {name}\n{table}{notes}", validation=result.to_json())
