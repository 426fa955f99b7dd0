"""The `cudalens/status` notification: what the editor's status item shows (the VS Code extension names the
GPU there). `{gpu: name | null, busy: bool, message?: str}`; clients that do not know it ignore it."""

from __future__ import annotations

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
