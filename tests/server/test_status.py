"""The server tells the editor once, after initialization, which GPU it found (the VS Code extension shows it
in its status item); without one it says why."""

from __future__ import annotations

from lsptools import wait_until
from pytest_lsp import LanguageClient

from cudalens.profiler.gpu_specs import GpuFacts, NoGpu, detect_gpu, facts_for_part
from cudalens.server.status import status_payload


async def test_status_names_the_gpu_or_why_there_is_none(client: LanguageClient):
    await wait_until(lambda: client.statuses, "a cudalens/status notification")
    [status] = client.statuses
    expected = status_payload(detect_gpu())
    assert _plain(status) == expected


def test_payload_shapes() -> None:
    assert status_payload(NoGpu("nvidia-smi not found")) == {
        "gpu": None, "busy": False, "message": "nvidia-smi not found"}
    facts = facts_for_part("NVIDIA H200")
    assert isinstance(facts, GpuFacts)
    assert status_payload(facts, busy=True) == {"gpu": facts.name, "busy": True}


def _plain(params) -> dict:
    if isinstance(params, dict):
        return params
    return {k: getattr(params, k) for k in ("gpu", "busy", "message") if getattr(params, k, None) is not None
            or k == "gpu"}
