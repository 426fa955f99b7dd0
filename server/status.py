"""The `cudalens/status` notification: what the editor's status item shows (the VS Code extension names the
GPU there). `{gpu: name | null, busy: bool, message?: str}`; clients that do not know it ignore it."""

from __future__ import annotations

from typing import Any

from cudalens.profiler.gpu_specs import GpuFacts, NoGpu

STATUS_METHOD = "cudalens/status"


def status_payload(gpu: GpuFacts | NoGpu, busy: bool = False) -> dict[str, Any]:
    if isinstance(gpu, GpuFacts):
        return {"gpu": gpu.name, "busy": busy}
    return {"gpu": None, "busy": busy, "message": gpu.reason}
