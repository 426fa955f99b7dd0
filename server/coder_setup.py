"""The server's settings → the agents' objects: the Coder's client, the loop's settings, the evaluator, the loop.

Plain functions (no LSP); the API key is read from the environment variable `coder.apiKeyEnv` names, only by
the Coder's client when it makes a request, and never logged.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings as AgentCoderSettings
from cudalens.agents.gpu_specs import detect_gpu_specs
from cudalens.agents.optimize_loop import LoopSettings, OptimizeLoop, Progress
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from cudalens.agents.resources import WithCompileResources
from cudalens.analysis.api import analyze_text
from cudalens.profiler.anti_cheat import AntiCheatPolicy
from cudalens.server.settings import ClientTrust, ServerSettings
from cudalens.server.trust import coder_refusal

_MODEL = re.compile(r"^\s*class\s+Model\b", re.M)
_GET_INPUTS = re.compile(r"^\s*def\s+get_inputs\b", re.M)


def coder_settings(settings: ServerSettings) -> AgentCoderSettings:
    c = settings.coder
    return AgentCoderSettings(
        base_url=c.base_url or None,
        model=c.model or AgentCoderSettings.model,
        api_key_env=c.api_key_env,
        temperature=c.temperature,
        reasoning_effort=c.reasoning_effort or None,
        timeout_s=c.timeout_seconds,
        retries=c.retries,
        stream=c.stream,
        price_in_per_1k=c.price_in_per_1k,
        price_out_per_1k=c.price_out_per_1k,
    )


def coder_blocked(settings: ServerSettings, trust: ClientTrust) -> str | None:
    """Why the Coder cannot be asked now, or None: an untrusted workspace, an endpoint the user did not choose
    (trust.py), or no key."""
    return coder_refusal(settings, trust) or missing_key(settings)


def missing_key(settings: ServerSettings) -> str | None:
    """Why the Coder cannot be called, or None. Says the variable's name, never its value."""
    name = settings.coder.api_key_env
    if os.environ.get(name):
        return None
    return (f"cudalens: the Coder needs an API key in the environment variable {name} (setting "
            "`cudalens.coder.apiKeyEnv` names another); start the editor with it set")


def kernelbench_problem(path: str, text: str) -> str | None:
    """Why the loop cannot run on this document, or None when it is a KernelBench-style file."""
    if not path.endswith(".py") or not _MODEL.search(text) or not _GET_INPUTS.search(text):
        return (f"cudalens: optimizing needs a KernelBench-style Python file (class Model, get_inputs() and the "
                f"ModelNew to improve); {Path(path).name} is not one")
    return None


@dataclass
class LoopRun:
    """A loop and the evaluator it owns (closed when the run ends)."""

    loop: OptimizeLoop
    evaluator: ProfilerEvaluator

    def close(self) -> None:
        self.evaluator.close()


def build_loop(
    settings: ServerSettings, path: str, source: str, kernel: str | None, *, repair_only: bool,
    on_progress: Callable[[Progress], None], runs_dir: Path | None,
) -> LoopRun:
    """Everything the loop needs; asks nvidia-smi for the GPU, so call it off the event loop."""
    opt = settings.optimize
    policy = AntiCheatPolicy(require_custom_kernel=not opt.allow_torch_ops, allow_torch_compute=opt.allow_torch_ops)
    loop_settings = LoopSettings(
        rounds=opt.rounds, budget_usd=opt.budget_usd or None, patience=max(opt.patience, 1),
        repair_only=repair_only, anti_cheat=policy,
    )
    worker = ProfilerEvaluator(source, ProfilerEvaluatorSettings(
        python=settings.worker.python, timeout_s=settings.worker.timeout_seconds,
        secret_env=(settings.coder.api_key_env,),
    ))

    def findings_for(candidate: str) -> list:
        report = analyze_text(path, candidate)
        return [f for f in report.findings if kernel is None or f.kernel in (None, kernel)]

    loop = OptimizeLoop(
        WithCompileResources(worker, path), CoderClient(coder_settings(settings)), source,
        kernel=kernel or Path(path).stem, gpu=detect_gpu_specs(), settings=loop_settings,
        cancel=threading.Event(), on_progress=on_progress, run_root=runs_dir, findings_for=findings_for,
    )
    return LoopRun(loop, worker)
