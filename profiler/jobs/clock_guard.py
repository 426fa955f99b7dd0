"""The clocks a timing trusts, as they were before any candidate ran in this worker.

A candidate that replaces `torch.cuda.Event.elapsed_time`, `torch.cuda.synchronize` or `time.perf_counter` fakes
its own speedup (KernelBench's anti-cheat list; the static check in agents/anti_cheat.py sees only the plain
spellings). The worker is long-lived, so a replacement would also outlive the candidate and fake every later
timing: `remember()` runs at the start of each test job (the first one sees the clocks as torch made them) and
`replaced()` names what differs. A job that finds one fails the candidate and retires the worker.
Standard library at top level.
"""

from __future__ import annotations

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


def _current() -> dict[str, Any]:
    import time

    import torch

    roots = {"time": time, "torch": torch}
    found = {}
    for name in GUARDED:
        root, *attrs = name.split(".")
        value: Any = roots[root]
        for attr in attrs:
            value = getattr(value, attr, None)
        found[name] = value
    return found


def remember() -> None:
    """Keeps the clocks of the first call in this process: later calls change nothing. Without torch there is
    nothing to keep (the test then says torch is missing, as it did before this guard)."""
    if _ORIGINALS:
        return
    try:
        clocks = _current()
    except ImportError:
        return
    _ORIGINALS.update(clocks)


def replaced() -> list[str]:
    """The guarded names whose object is no longer the one `remember()` kept."""
    if not _ORIGINALS:
        return []
    now = _current()
    return [name for name in GUARDED if now[name] is not _ORIGINALS[name]]
