"""The server's settings → the agents' typed settings: the Coder's, and the optimize run's (agents/optimize_run.py builds it).

Plain functions (no LSP); the API key is read from the environment variable `coder.apiKeyEnv` names, only by
the Coder's client when it makes a request, and never logged.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cudalens.agents.coder.settings import CoderSettings as AgentCoderSettings
from cudalens.agents.optimize_loop import LoopSettings
from cudalens.agents.optimize_run import OptimizeSpec
from cudalens.agents.profiler_evaluator import ProfilerEvaluatorSettings
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


def optimize_spec(
    settings: ServerSettings, path: str, source: str, kernel: str | None, *, repair_only: bool,
    runs_dir: Path | None,
) -> OptimizeSpec:
    """The server's settings as the run's typed settings (the GPU is this machine's)."""
    opt = settings.optimize
    policy = AntiCheatPolicy(require_custom_kernel=not opt.allow_torch_ops, allow_torch_compute=opt.allow_torch_ops)
    loop = LoopSettings(
        rounds=opt.rounds, budget_usd=opt.budget_usd or None, patience=max(opt.patience, 1),
        repair_only=repair_only, anti_cheat=policy,
    )
    worker = ProfilerEvaluatorSettings(python=settings.worker.python, timeout_s=settings.worker.timeout_seconds)
    return OptimizeSpec(path, source, kernel, coder_settings(settings), loop, worker, runs_dir=runs_dir)
