"""Every command, however started (a lens, a quick fix, the palette, Neovim), runs through command_runs.py: one
work-done progress titled with the command and its file, its stage as the message, a cancel button, and the
answer as the progress's end and a line in the editor's log (VS Code's cudalens output)."""

from __future__ import annotations

import asyncio

from lsprotocol import types
from lsptools import open_doc, start, wait_until
from pytest_lsp import LanguageClient
from test_on_save import RIGHT, needs_torch

from cudalens.server.command_runs import outcome, title_of
from tests.agents.fake_openai import FakeOpenAI, reply
from tests.agents.kernelbench_cpu import START

KEY_ENV = "CUDALENS_COMMAND_RUNS_KEY"


def progress(client: LanguageClient) -> dict[str, list]:
    return {token: list(values) for token, values in client.progress_reports.items()}


def begins(client: LanguageClient) -> list[types.WorkDoneProgressBegin]:
    return [v for values in client.progress_reports.values() for v in values
            if isinstance(v, types.WorkDoneProgressBegin)]


def logged(client: LanguageClient) -> str:
    return "\n".join(m.message for m in client.log_messages)


async def execute(client: LanguageClient, command: str, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command, list(arguments)))


def test_the_title_names_the_command_its_file_and_kernel():
    assert title_of("cudalens.runTests", "Run tests", ["file:///w/a%20b/k.cu", "scale"]) == \
        "cudalens: Run tests · k.cu · scale"
    assert title_of("cudalens.showReport", "Show report", ["file:///w/k.cu"]) == "cudalens: Show report · k.cu"
    assert title_of("cudalens.applyOptimization", "Apply the proposal", ["3f2a"]) == "cudalens: Apply the proposal"
    assert title_of("cudalens.runTests", "Run tests", [42]) == "cudalens: Run tests"
    assert outcome("t", {"ok": False, "message": "m"}) == (False, "m")
    assert outcome("t", None) == (True, "t: done")


async def test_a_refused_run_still_ends_its_progress_and_logs_why(bare_client: LanguageClient):
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "k.cu", "__global__ void k(float* x) { x[0] = 1; }\n")
    answer = await execute(bare_client, "cudalens.runTests", uri, "k")
    assert answer["ok"] is False
    [run] = [v for v in progress(bare_client).values() if v[0].title == "cudalens: Run tests · k.cu · k"]
    assert isinstance(run[-1], types.WorkDoneProgressEnd) and run[-1].message == answer["message"]
    assert "cudalens: Run tests · k.cu · k ✗ nothing to test in k.cu" in logged(bare_client)


@needs_torch
async def test_run_tests_is_one_progress_whose_messages_are_the_runs_stages(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, {"settings": {"onSave": {"compile": False}}})
    uri = open_doc(bare_client, bare_client.root / "relu.py", RIGHT, language="python")
    answer = await execute(bare_client, "cudalens.runTests", uri, "")
    assert answer["ok"] is True
    [run] = [v for v in progress(bare_client).values() if v[0].title == "cudalens: Run tests · relu.py"]
    assert len(begins(bare_client)) == 1  # not a second spinner for the on-save steps it runs
    stages = [v.message for v in run if isinstance(v, types.WorkDoneProgressReport)]
    assert any(s and s.startswith("testing") for s in stages), stages
    assert run[-1].message == answer["message"]
    assert f"cudalens: Run tests · relu.py → {answer['message'].removeprefix('cudalens: ')}" in logged(bare_client)


async def ask_about_the_loop(client: LanguageClient, fake: FakeOpenAI) -> asyncio.Future:
    """Starts the server with `fake` as the Coder, opens START and asks about its loop (as the quick fix does)."""
    await start(client, client.root, {"settings": {
        "onSave": {"compile": False}, "coder": {"baseUrl": fake.base_url, "model": "fake", "apiKeyEnv": KEY_ENV}}})
    lines = START.splitlines()
    first = lines.index("        out = torch.zeros(x.shape[0], dtype=x.dtype)", lines.index("class ModelNew(nn.Module):"))
    rng = {"start": {"line": first, "character": 0}, "end": {"line": first + 3, "character": 0}}
    uri = open_doc(client, client.root / "rowsum.py", START, language="python")
    return asyncio.ensure_future(execute(client, "cudalens.askCoder", uri, rng, ""))


async def test_ask_coder_says_it_is_asking_and_logs_the_answer(bare_client: LanguageClient, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with FakeOpenAI([reply("Sum in one call.\n\n```python\n        return x.sum(dim=1)\n```\n", delay_s=0.5)]) as fake:
        answer = await (await ask_about_the_loop(bare_client, fake))
    [run] = [v for v in progress(bare_client).values() if v[0].title == "cudalens: Ask Coder · rowsum.py"]
    assert run[0].cancellable is True
    assert any((v.message or "").startswith("asking the Coder (fake) about lines") for v in run[1:-1]), run
    assert run[-1].message == answer["message"]
    assert "cudalens: Ask Coder · rowsum.py → rowsum.py: the Coder's suggestion for this: Sum in one call." \
        in logged(bare_client)


async def test_the_cancel_button_stops_the_command_and_says_so(bare_client: LanguageClient, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with FakeOpenAI([reply("late", delay_s=60)]) as fake:
        pending = await ask_about_the_loop(bare_client, fake)
        token = await wait_until(lambda: next((t for t, v in progress(bare_client).items()  # begun, and asking
                                               if len(v) > 1 and v[0].title.startswith("cudalens: Ask Coder")),
                                              None), "the Ask Coder progress")
        bare_client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                                    types.WorkDoneProgressCancelParams(token=token))
        answer = await asyncio.wait_for(pending, 20)
    assert answer == {"ok": False, "message": "cudalens: Ask Coder · rowsum.py: cancelled"}
    assert "cudalens: Ask Coder · rowsum.py ✗ Ask Coder · rowsum.py: cancelled" in logged(bare_client)
