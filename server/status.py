"""The `cudalens/status` notification: what the editor's status item shows (the VS Code extension names the
GPU there). `{gpu: name | null, busy: bool, message?: str}`; clients that do not know it ignore it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from cudalens.profiler.gpu_specs import GpuFacts, NoGpu

STATUS_METHOD = "cudalens/status"


def status_payload(gpu: GpuFacts | NoGpu, busy: bool = False, message: str | None = None) -> dict[str, Any]:
    """`message`: what the server is doing while busy (the status item shows it), else why there is no GPU."""
    payload: dict[str, Any] = {"gpu": gpu.name if isinstance(gpu, GpuFacts) else None, "busy": busy}
    text = message if message is not None else (gpu.reason if isinstance(gpu, NoGpu) else None)
    if text is not None:
        payload["message"] = text
    return payload


class Busy:
    """What the status item says while jobs overlap (a build ahead and a save, two files' saves): the latest job
    still running, and idle only when none is."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._doing: dict[object, str] = {}  # in the order the jobs began

    @contextlib.contextmanager
    def doing(self, gpu: GpuFacts | NoGpu, message: str) -> Iterator[None]:
        key = object()
        self._doing[key] = message
        self._send(status_payload(gpu, busy=True, message=message))
        try:
            yield
        finally:
            del self._doing[key]
            still = next(reversed(self._doing.values()), None)
            self._send(status_payload(gpu, busy=still is not None, message=still))
