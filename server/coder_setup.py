"""The server's settings → the agents' objects: the Coder's client, the loop's settings, the evaluator, the loop.

Plain functions (no LSP); the API key is read from the environment variable `coder.apiKeyEnv` names, only by
the Coder's client when it makes a request, and never logged.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from cudalens.agents.profiler_evaluator import ProfilerEvaluatorSettings
from cudalens.server import key_pipe
from cudalens.server.settings import ClientTrust, ServerSettings
from cudalens.server.trust import coder_refusal

if TYPE_CHECKING:
    from cudalens.agents.optimize_run import OptimizeSpec

_MODEL = re.compile(r"^\s*class\s+Model\b", re.M)
_GET_INPUTS = re.compile(r"^\s*def\s+get_inputs\b", re.M)


def coder_blocked(settings: ServerSettings, trust: ClientTrust) -> str | None:
    """Why the Coder cannot be asked now, or None: an untrusted workspace, an endpoint the user did not choose
    (trust.py), or no key."""
    return coder_refusal(settings, trust) or missing_key(settings)


def missing_key(settings: ServerSettings) -> str | None:
    """Why the Coder cannot be called, or None (an endpoint on this machine needs no key). Says the variable's
    name, never its value."""
    key_pipe.wait()  # the key from VS Code's secret storage may still be on its way (key_pipe.py)
    if settings.coder.api_key() is not None:
        return None
    return (f"cudalens: the Coder needs an API key: in VS Code run **cudalens: Set API key**; elsewhere start the "
            f"editor with the environment variable {settings.coder.api_key_env} set (`coder.apiKeyEnv` names "
            "another; an endpoint on this machine, `coder.baseUrl`, needs none)")


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
    """The server's settings as the run's typed settings (the GPU is this machine's: agents/optimize_run.py)."""
    # here: the loop and the OpenAI client are not for the server's start
    from cudalens.agents.optimize_run import OptimizeSpec

    worker = ProfilerEvaluatorSettings(python=settings.worker.python, timeout_s=settings.worker.timeout_seconds)
    return OptimizeSpec(path, source, kernel, settings.coder, settings.optimize.loop(repair_only=repair_only),
                        worker, runs_dir=runs_dir)
