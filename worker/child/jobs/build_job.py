"""Builds a `.cu` file's extension as the `test` job would (content-named, the fast build where it can), and
nothing else: no reference module is imported and no kernel launched, so none of the user's code runs. The
server asks for it when a `.cu` file with a reference opens while `onSave.test` is on, so that its first save finds
the bindings, the precompiled header and, for an unchanged file, the module itself built.

payload: {"path"}; returns {"built": NAME, "builds": [...], "seconds": S} or {"skipped": why}.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..lib import fast_inline, problem_loader

BESIDE_WARM_UP = True  # it compiles only: it need not wait for the warm-up's profiler session (lib/background.py)


def run(payload: dict) -> dict:
    found = _to_build(payload)
    if isinstance(found, str):
        return {"skipped": found}
    path, text, functions = found
    first, start = len(fast_inline.LOG), time.perf_counter()
    name = problem_loader.build_name(path, text)
    problem_loader.compile_cuda(name, text, functions, payload)
    return {"built": name, "builds": fast_inline.LOG[first:], "seconds": time.perf_counter() - start}


def prepare(payload: dict) -> None:
    """While the worker warms up (protocol.Prepare): the compiles of this build that need no torch imported, started
    now (fast_inline.start_early). A server opening a `.cu` file as it starts asks for the build during the warm-up's
    torch import (3-5 s), and the bindings, a first build's longest compile, take longer than that."""
    found = _to_build(payload)
    if not isinstance(found, str):
        path, text, functions = found
        fast_name, kwargs = problem_loader.cuda_load_arguments(problem_loader.build_name(path, text), text, functions, payload)
        fast_inline.start_early(fast_name, **kwargs)


def _to_build(payload: dict) -> tuple[Path, str, list[tuple[str, str]]] | str:
    """The `.cu` file, its text and its torch host functions, or why there is nothing to build."""
    path = Path(payload["path"])
    if path.suffix.lower() != ".cu":
        return "only a .cu file is built ahead (a .py file's builds run its code)"
    text = path.read_text(encoding="utf-8", errors="replace")
    functions = problem_loader.host_functions(text)
    if not functions:
        return f"{path.name} has no torch host function"
    return path, text, functions
