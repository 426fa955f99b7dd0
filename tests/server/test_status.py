"""The server tells the editor once, after initialization, which GPU it found (the VS Code extension shows it
in its status item); without one it says why."""

from __future__ import annotations

from lsptools import wait_until
from pytest_lsp import LanguageClient

from cudalens.profiler.gpu_specs import GpuFacts, NoGpu, detect_gpu, facts_for_part
from cudalens.server.status import Busy, status_payload


async def test_status_names_the_gpu_or_why_there_is_none(client: LanguageClient):
    await wait_until(lambda: client.statuses, "a cudalens/status notification")
    [status] = client.statuses
    expected = status_payload(detect_gpu())
    assert status == expected


def test_payload_shapes() -> None:
    assert status_payload(NoGpu("nvidia-smi not found")) == {
        "gpu": None, "busy": False, "message": "nvidia-smi not found"}
    facts = facts_for_part("NVIDIA H200")
    assert isinstance(facts, GpuFacts)
    assert status_payload(facts, busy=True) == {"gpu": facts.name, "busy": True}


def test_overlapping_jobs_keep_the_item_busy_until_the_last_one_ends() -> None:
    """A save that starts while a file builds ahead, and ends after it: idle only at the end, and the item says
    what is still running in between."""
    sent: list[dict] = []
    busy, gpu = Busy(sent.append), facts_for_part("NVIDIA H200")
    with busy.doing(gpu, "building a.cu ahead of its first save"):
        with busy.doing(gpu, "running a.cu"):
            pass
        with busy.doing(gpu, "running b.cu"):
            pass
    assert [(p["busy"], p.get("message")) for p in sent] == [
        (True, "building a.cu ahead of its first save"),
        (True, "running a.cu"),
        (True, "building a.cu ahead of its first save"),
        (True, "running b.cu"),
        (True, "building a.cu ahead of its first save"),
        (False, None),
    ]
    sent.clear()
    first = busy.doing(gpu, "building a.cu ahead of its first save")
    first.__enter__()
    with busy.doing(gpu, "running a.cu"):
        first.__exit__(None, None, None)  # the build ends while the save still runs
        assert sent[-1] == {"gpu": gpu.name, "busy": True, "message": "running a.cu"}
    assert sent[-1] == {"gpu": gpu.name, "busy": False}

