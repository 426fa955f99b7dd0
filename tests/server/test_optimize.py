"""Optimize kernel / Fix with Coder / Ask Coder through the real server, against a real local HTTP server that
speaks the OpenAI API (the only stand-in), with pure-PyTorch KernelBench files so the loop runs on CPU torch."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from lsptools import apply_edits, open_doc, replace_all, start, wait_until
from pytest_lsp import LanguageClient

from tests.agents.fake_openai import FakeOpenAI, reply
from tests.agents.kernelbench_cpu import FAST, START, WRONG, fenced, model_new

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")

KEY_ENV = "CUDALENS_SERVER_TEST_CODER_KEY"
KEY = "sk-server-SECRET-5551212"
os.environ[KEY_ENV] = KEY  # before the server starts: it inherits the key, as from the editor
LOOP_S = 300.0  # a loop of two evaluations on a busy 2-core machine: a guard against a hang, not a speed goal
SLEEPY = model_new("import time\ntime.sleep(600)\nreturn x.sum(dim=1)")


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def settings(fake: FakeOpenAI, rounds: int = 1) -> dict:
    return {"settings": {
        "onSave": {"compile": False},
        "coder": {"baseUrl": fake.base_url, "model": "fake", "apiKeyEnv": KEY_ENV, "priceInPer1k": 0.001},
        "optimize": {"rounds": rounds, "allowTorchOps": True},
        "worker": {"timeoutSeconds": 120},
    }}


async def execute(client: LanguageClient, command: str, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command, list(arguments)))


def reports(client: LanguageClient) -> list[tuple[str, str]]:
    return [(token, v.message or "") for token, values in client.progress_reports.items() for v in values
            if isinstance(v, types.WorkDoneProgressReport)]


def ends(client: LanguageClient) -> list[str]:
    return [v.message or "" for values in client.progress_reports.values() for v in values
            if isinstance(v, types.WorkDoneProgressEnd)]


async def test_optimize_offers_the_fast_candidate_and_applies_it_at_the_right_version(
    bare_client: LanguageClient, fake: FakeOpenAI
):
    fake.script = [reply(fenced(FAST))]
    bare_client.choice = "Apply"
    await start(bare_client, bare_client.root, settings(fake))
    uri = open_doc(bare_client, bare_client.root / "rowsum.py", START, language="python")
    started = await execute(bare_client, "cudalens.optimizeKernel", uri, "")
    assert started["ok"] is True and started["runId"]
    [applied] = await wait_until(lambda: bare_client.edits, "the proposal to be applied", LOOP_S)
    [change] = applied.edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == 1
    assert apply_edits(START, change.edits) == FAST
    [asked] = bare_client.asked
    assert "faster" in asked.message and "1 Coder round(s)" in asked.message and "tokens" in asked.message
    assert [a.title for a in asked.actions] == ["Apply", "Show diff", "Discard"]
    assert any("round 1/1" in m for _, m in reports(bare_client))
    assert not any("round 1/1: round 1/1" in m for _, m in reports(bare_client))  # said once, not twice
    assert KEY not in "".join(m.message for m in bare_client.log_messages)
    assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_a_document_changed_meanwhile_rejects_the_proposal(bare_client: LanguageClient, fake: FakeOpenAI):
    fake.script = [reply(fenced(FAST))]
    await start(bare_client, bare_client.root, settings(fake))
    uri = open_doc(bare_client, bare_client.root / "rowsum.py", START, language="python")
    started = await execute(bare_client, "cudalens.optimizeKernel", uri, "")
    bare_client.choice = "Show diff"
    await wait_until(lambda: len(bare_client.asked) == 2, "the proposal, then Apply/Discard after the diff", LOOP_S)
    [shown] = bare_client.shown_documents
    assert shown.uri.endswith(".diff") and "+        return x.sum(dim=1)" in Path(shown.uri[len("file://"):]).read_text()
    assert [a.title for a in bare_client.asked[1].actions] == ["Apply", "Discard"]  # "Show diff" answered twice: kept
    replace_all(bare_client, uri, START + "\n# a later edit\n", 2)
    answer = await execute(bare_client, "cudalens.applyOptimization", started["runId"])
    assert answer["ok"] is False and "changed since" in answer["message"]
    assert not bare_client.edits
    replace_all(bare_client, uri, START, 3)  # the same text, but a later version: still refused
    answer = await execute(bare_client, "cudalens.applyOptimization", started["runId"])
    assert answer["ok"] is False and not bare_client.edits


async def test_cancel_stops_the_loop_and_its_candidate(bare_client: LanguageClient, fake: FakeOpenAI):
    fake.script = [reply(fenced(SLEEPY))]
    await start(bare_client, bare_client.root, settings(fake, rounds=3))
    uri = open_doc(bare_client, bare_client.root / "rowsum.py", START, language="python")
    await execute(bare_client, "cudalens.optimizeKernel", uri, "")
    token = (await wait_until(
        lambda: [t for t, m in reports(bare_client) if "round 1/3" in m and "testing" in m], "round 1 to run", LOOP_S
    ))[0]
    bare_client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token))
    await wait_until(lambda: "cancelled" in ends(bare_client), "the loop to stop", LOOP_S)
    await wait_until(lambda: any("was cancelled" in m.message for m in bare_client.messages), "the message")
    assert not bare_client.asked and len(fake.requests) == 1


async def test_fix_with_coder_repairs_a_wrong_model(bare_client: LanguageClient, fake: FakeOpenAI):
    fake.script = [reply(fenced(FAST))]
    bare_client.choice = "Apply"
    await start(bare_client, bare_client.root, settings(fake, rounds=3))
    uri = open_doc(bare_client, bare_client.root / "rowsum.py", WRONG, language="python")
    await execute(bare_client, "cudalens.fixWithCoder", uri, "")
    [applied] = await wait_until(lambda: bare_client.edits, "the repair to be applied", LOOP_S)
    assert apply_edits(WRONG, applied.edit.document_changes[0].edits) == FAST
    assert "stopped: repaired" in bare_client.asked[0].message and len(fake.requests) == 1


async def _ask_about_the_loop(client: LanguageClient, fake: FakeOpenAI) -> dict:
    """Ask Coder about ModelNew's Python loop (its three lines) in rowsum.py: the command's answer."""
    await start(client, client.root, settings(fake))
    uri = open_doc(client, client.root / "rowsum.py", START, language="python")
    lines = START.splitlines()
    first = lines.index("        out = torch.zeros(x.shape[0], dtype=x.dtype)", lines.index("class ModelNew(nn.Module):"))
    rng = {"start": {"line": first, "character": 0}, "end": {"line": first + 3, "character": 0}}
    return await execute(client, "cudalens.askCoder", uri, rng, "")


async def test_ask_coder_proposes_an_edit_for_the_lines(bare_client: LanguageClient, fake: FakeOpenAI):
    fake.script = [reply("Sum in one call instead of a Python loop.\n\n```python\n        return x.sum(dim=1)\n```\n")]
    answer = await _ask_about_the_loop(bare_client, fake)
    assert answer["ok"] is True and "one call" in answer["explanation"] and answer["resultId"]
    assert "+        return x.sum(dim=1)" in answer["diff"]
    bare_client.choice = "Apply"
    applied = await execute(bare_client, "cudalens.applyOptimization", answer["resultId"])
    assert applied["ok"] is True
    new = apply_edits(START, bare_client.edits[0].edit.document_changes[0].edits)
    assert new.count("return x.sum(dim=1)") == 1 and "for j in range" in new.split("class ModelNew")[0]


async def test_ask_coder_shows_its_explanation(bare_client: LanguageClient, fake: FakeOpenAI):
    """The Coder's words before and after its code reach the user: in the answer, in the question that offers
    the edit (VS Code: the notification with Apply / Show diff / Discard) and, whole, in the editor's log."""
    fake.script = [reply("Sum in one call instead of a Python loop.\n\n```python\n        return x.sum(dim=1)\n```\n\n"
                         "torch.sum reduces each row in C++,\nwith no Python loop per element.\n")]
    answer = await _ask_about_the_loop(bare_client, fake)
    assert answer["explanation"] == ("Sum in one call instead of a Python loop.\n\n"
                                     "torch.sum reduces each row in C++,\nwith no Python loop per element.")
    assert "return x.sum" not in answer["explanation"]
    assert answer["message"] == ("cudalens: rowsum.py: the Coder's suggestion for this: Sum in one call instead of a "
                                 "Python loop. torch.sum reduces each row in C++, with no Python loop per element.")
    [asked] = await wait_until(lambda: bare_client.asked, "the proposal")
    assert asked.message == answer["message"] and [a.title for a in asked.actions] == ["Apply", "Show diff", "Discard"]
    logged = "\n".join(m.message for m in bare_client.log_messages)
    assert "torch.sum reduces each row in C++,\nwith no Python loop per element." in logged


async def test_ask_coder_changes_only_the_kernels_lines(bare_client: LanguageClient, fake: FakeOpenAI):
    """The Coder's block ends with an empty line (as replies often do): applied, the proposal changes the line it
    rewrote and nothing else, the blank line and `main` after the kernel byte for byte."""
    from test_wiring_units import GUARDED, KERNEL_FILE

    fake.script = [reply(f"Guard the index.\n\n```cuda\n{GUARDED}\n```\n")]
    await start(bare_client, bare_client.root, settings(fake))
    uri = open_doc(bare_client, bare_client.root / "scale.cu", KERNEL_FILE)
    rng = {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 10}}  # in the kernel
    await wait_until(lambda: bare_client.published, "the analysis, which finds the kernel's lines")
    answer = await execute(bare_client, "cudalens.askCoder", uri, rng, "")
    assert answer["ok"] is True and "lines 3-6 of" in fake.requests[0].prompt, answer
    bare_client.choice = "Apply"
    assert (await execute(bare_client, "cudalens.applyOptimization", answer["resultId"]))["ok"] is True
    new = apply_edits(KERNEL_FILE, bare_client.edits[0].edit.document_changes[0].edits)
    assert new == KERNEL_FILE.replace("    out[i] =", "    if (i < n) out[i] =")


async def test_show_diff_asks_a_client_with_a_diff_view_to_show_the_proposal(
    bare_client: LanguageClient, fake: FakeOpenAI
):
    """A client that declares `cudalens/showProposal` (VS Code's extension) gets the proposal's whole text to
    show in its own diff view, beside the document; no `.diff` file is written or opened."""
    from test_wiring_units import GUARDED, KERNEL_FILE

    fake.script = [reply(f"Guard the index.\n\n```cuda\n{GUARDED}```\n")]
    await start(bare_client, bare_client.root, settings(fake), shows_proposals=True)
    uri = open_doc(bare_client, bare_client.root / "scale.cu", KERNEL_FILE)
    await wait_until(lambda: bare_client.published, "the analysis")
    bare_client.choice = "Show diff"
    rng = {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 10}}
    answer = await execute(bare_client, "cudalens.askCoder", uri, rng, "CL101")
    [shown] = await wait_until(lambda: bare_client.proposals_shown, "the proposal to be shown")
    assert shown == {"uri": uri, "id": answer["resultId"], "title": "scale.cu ↔ the Coder's suggestion for CL101",
                     "text": KERNEL_FILE.replace("    out[i] =", "    if (i < n) out[i] =")}
    await wait_until(lambda: len(bare_client.asked) == 2, "Apply / Discard after the diff")
    assert [a.title for a in bare_client.asked[1].actions] == ["Apply", "Discard"]
    assert not bare_client.shown_documents


async def test_without_the_key_the_user_is_told_which_variable(bare_client: LanguageClient, fake: FakeOpenAI):
    options = settings(fake)
    options["settings"]["coder"]["apiKeyEnv"] = "CUDALENS_NO_SUCH_KEY_VARIABLE"
    options["settings"]["coder"]["baseUrl"] = "https://coder.example/v1"  # not on this machine: a key is needed
    await start(bare_client, bare_client.root, options)
    uri = open_doc(bare_client, bare_client.root / "rowsum.py", START, language="python")
    answer = await execute(bare_client, "cudalens.optimizeKernel", uri, "")
    assert answer["ok"] is False and "CUDALENS_NO_SUCH_KEY_VARIABLE" in answer["message"]
    assert "cudalens: Set API key" in answer["message"]
    assert not fake.requests


async def test_user_code_run_on_save_does_not_see_the_coders_key(bare_client: LanguageClient, fake: FakeOpenAI):
    options = settings(fake)
    options["settings"]["onSave"]["test"] = True
    await start(bare_client, bare_client.root, options)
    peeking = FAST.replace(
        "return x.sum(dim=1)",
        f"import os\n        return x.sum(dim=1) + (1.0 if os.environ.get({KEY_ENV!r}) else 0.0)",
    )
    assert peeking != FAST
    uri = open_doc(bare_client, bare_client.root / "rowsum.py", peeking, language="python")
    bare_client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await wait_until(lambda: ends(bare_client), "the on-save run", LOOP_S)
    assert "5/5" in ends(bare_client)[0], ends(bare_client)


async def test_code_actions_offer_the_coder_on_findings_and_models(bare_client: LanguageClient, fake: FakeOpenAI):
    await start(bare_client, bare_client.root, settings(fake))
    uri = open_doc(bare_client, bare_client.root / "rowsum.py", WRONG, language="python")
    answer = await execute(bare_client, "cudalens.runTests", uri, "")
    assert "CL901" in [f["code"] for f in answer["findings"]]
    line = WRONG.splitlines().index("class ModelNew(nn.Module):")
    actions = await bare_client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(types.Position(line, 8), types.Position(line, 8)),
        types.CodeActionContext(diagnostics=[]),
    ))
    # pygls' client structures a CodeAction that carries a command as a bare Command (the same keys), with the
    # command object flattened into text: check the text
    titles = {a.title: str(a.command) for a in actions}
    assert {"Fix with Coder", "Ask Coder about this (CL901)", "Optimize ModelNew"} <= set(titles)
    assert "cudalens.fixWithCoder" in titles["Fix with Coder"]
    assert "cudalens.askCoder" in titles["Ask Coder about this (CL901)"] and "CL901" in titles["Ask Coder about this (CL901)"]


async def test_exiting_mid_loop_leaves_no_candidate_running(bare_client: LanguageClient, fake: FakeOpenAI):
    from test_on_save import alive, worker_pids

    fake.script = [reply(fenced(SLEEPY))]
    await start(bare_client, bare_client.root, settings(fake, rounds=3))
    uri = open_doc(bare_client, bare_client.root / "rowsum.py", START, language="python")
    await execute(bare_client, "cudalens.optimizeKernel", uri, "")
    await wait_until(lambda: [t for t, m in reports(bare_client) if "round 1/3" in m and "testing" in m], "round 1", LOOP_S)
    workers = await wait_until(lambda: worker_pids(bare_client._server.pid), "the candidate's worker")
    await bare_client.shutdown_session()
    await wait_until(lambda: not any(alive(p) for p in workers), "the workers to die with the server")


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
async def test_without_a_gpu_optimize_is_refused_before_any_coder_round(bare_client: LanguageClient, fake: FakeOpenAI):
    """A CUDA KernelBench file where there is no GPU: refused up front with the reason, as Run tests is; the
    Coder endpoint sees no request (before, round 0 failed on the machine and repair rounds went to the LLM)."""
    options = settings(fake)
    options["settings"]["optimize"]["allowTorchOps"] = False
    await start(bare_client, bare_client.root, options)
    cuda_file = (Path(__file__).parents[1] / "vscode" / "fixtures" / "relu_model.py").read_text()
    uri = open_doc(bare_client, bare_client.root / "relu_model.py", cuda_file, language="python")
    answer = await execute(bare_client, "cudalens.optimizeKernel", uri, "scale_rows")
    assert answer["ok"] is False, answer
    assert "optimizing needs an NVIDIA GPU" in answer["message"] and "Nothing was sent to the Coder" in answer["message"]
    assert [m.message for m in bare_client.messages if "NVIDIA GPU" in m.message] == [answer["message"]]
    assert not fake.requests
