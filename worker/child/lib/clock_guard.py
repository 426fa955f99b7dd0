"""The clocks a timing trusts, as they were before any candidate ran in this worker, and where a file replaced one.

A candidate that replaces `torch.cuda.Event.elapsed_time`, `torch.cuda.synchronize` or `time.perf_counter` fakes
its own speedup (KernelBench's anti-cheat list; the static check in worker/child/anti_cheat.py sees only the plain
spellings). The worker is long-lived, so a replacement would also outlive the candidate and fake every later
timing: `remember()` runs at the start of each test job (the first one sees the clocks as torch made them) and
`replaced()` names what differs, with the line that did it. A job that finds one fails the candidate (CL906,
timing manipulation) and retires the worker, whether the file did it at import or in a call.

Where: attributes set on the `time` and `torch.cuda` modules are seen as they are set (the modules' class gets
a `__setattr__` that notes the setter's file and line, and changes nothing else); a method replaced on a class
(`torch.cuda.Event.elapsed_time = f`) is placed at the definition of its replacement. Standard library at top
level.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any

GUARDED = (
    "time.perf_counter",
    "time.perf_counter_ns",
    "torch.cuda.synchronize",
    "torch.cuda.Event",
    "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time",
    "torch.cuda.Event.synchronize",
    "torch.cuda.Stream.synchronize",
)

_ORIGINALS: dict[str, Any] = {}
_SETS: dict[str, tuple[str, int]] = {}  # guarded name → (file, line) of the last assignment seen this job


@dataclass(frozen=True)
class Replacement:
    name: str  # "torch.cuda.synchronize"
    file: str | None  # where it was replaced (or its replacement defined); None: not known
    line: int  # 1-based; 0 when not known


def _roots() -> dict[str, Any]:
    import time

    import torch

    return {"time": time, "torch": torch}


def _current() -> dict[str, Any]:
    roots = _roots()
    found = {}
    for name in GUARDED:
        root, *attrs = name.split(".")
        value: Any = roots[root]
        for attr in attrs:
            value = getattr(value, attr, None)
        found[name] = value
    return found


def remember() -> None:
    """Keeps the clocks of the first call in this process (later calls change nothing) and starts noting where
    they are set. Without torch there is nothing to keep (the test then says torch is missing)."""
    _SETS.clear()
    if _ORIGINALS:
        return
    try:
        clocks = _current()
        roots = _roots()
    except ImportError:
        return
    _ORIGINALS.update(clocks)
    _watch(roots["time"], "time")
    _watch(roots["torch"].cuda, "torch.cuda")


def _watch(module: types.ModuleType, prefix: str) -> None:
    guarded = {name.rsplit(".", 1)[1] for name in GUARDED if name.rsplit(".", 1)[0] == prefix}

    def __setattr__(self: types.ModuleType, attr: str, value: Any) -> None:
        if attr in guarded:
            caller = sys._getframe(1)  # builtins (setattr) have no frame: this is the file's own line
            _SETS[f"{prefix}.{attr}"] = (caller.f_code.co_filename, caller.f_lineno)
        super(watched, self).__setattr__(attr, value)

    watched = type(f"_Watched_{type(module).__name__}", (type(module),), {"__setattr__": __setattr__})
    try:
        module.__class__ = watched
    except TypeError:  # a module type that refuses: replacements are still found, placed by definition
        pass


def replaced() -> list[Replacement]:
    """The guarded names whose object is no longer the one `remember()` kept, with where that happened."""
    if not _ORIGINALS:
        return []
    now = _current()
    return [_where(name, now[name]) for name in GUARDED if now[name] is not _ORIGINALS[name]]


def _where(name: str, value: Any) -> Replacement:
    if name in _SETS:
        return Replacement(name, *_SETS[name])
    code = getattr(getattr(value, "__func__", value), "__code__", None)
    if code is not None:
        return Replacement(name, code.co_filename, code.co_firstlineno)
    return Replacement(name, None, 0)
