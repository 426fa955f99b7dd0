"""`cudalens.runTests` / `cudalens.profile` / `cudalens.validate` on demand: the same steps as on save."""

from __future__ import annotations

import shutil

import pytest
from lsprotocol import types
from lsptools import codes, open_doc, replace_all, start
from pytest_lsp import LanguageClient
from test_on_save import RIGHT, WRONG, needs_torch


async def execute(client: LanguageClient, command: str, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command, list(arguments)))


@needs_torch
async def test_run_tests_answers_with_the_verdict_and_publishes_cl901(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, {"settings": {"onSave": {"compile": False}}})
    uri = open_doc(bare_client, bare_client.root / "relu.py", WRONG, language="python")
    answer = await execute(bare_client, "cudalens.runTests", uri, "")
    assert answer["ok"] is False and "test failed" in answer["message"]
    assert "CL901" in [f["code"] for f in answer["findings"]]
    assert any("CL901" in codes(p.diagnostics) for p in bare_client.published if p.uri == uri and p.version == 1)
    assert any("test failed" in m.message for m in bare_client.messages)


@needs_torch
async def test_run_tests_times_a_passing_model(bare_client: LanguageClient):
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "relu.py", RIGHT, language="python")
    answer = await execute(bare_client, "cudalens.runTests", uri, "")
    assert answer["ok"] is True and "5/5" in answer["message"] and "vs PyTorch" in answer["message"]
    assert answer["timing"]["speedup"] > 0


async def test_commands_refuse_an_unsaved_document_and_bad_arguments(bare_client: LanguageClient):
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "relu.py", RIGHT, language="python")
    replace_all(bare_client, uri, RIGHT + "\n# edited\n", 2)
    answer = await execute(bare_client, "cudalens.profile", uri, "relu")
    assert answer["ok"] is False and "save relu.py first" in answer["message"]
    answer = await execute(bare_client, "cudalens.runTests", 42)
    assert answer["ok"] is False and "[uri, kernelName]" in answer["message"]


async def test_run_tests_on_a_file_without_a_test_says_how_to_add_one(bare_client: LanguageClient):
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "k.cu", "__global__ void k(float* x) { x[0] = 1; }\n")
    answer = await execute(bare_client, "cudalens.runTests", uri, "k")
    assert answer["ok"] is False and "k_ref.py" in answer["message"]


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
async def test_validate_without_a_gpu_says_so(bare_client: LanguageClient):
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "k.cu", "__global__ void k(float* x) { x[0] = 1; }\n")
    answer = await execute(bare_client, "cudalens.validate", uri, "k")
    assert answer["ok"] is False and "needs a GPU" in answer["message"]


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
async def test_profile_without_a_gpu_answers_why(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, {"settings": {"onSave": {"compile": False}}})
    (bare_client.root / "k_ref.py").write_text("")
    uri = open_doc(bare_client, bare_client.root / "k.cu", "__global__ void k(float* x) { x[0] = 1; }\n")
    answer = await execute(bare_client, "cudalens.profile", uri, "k")
    assert answer["ok"] is False and "needs an NVIDIA GPU, and this machine has none" in answer["message"]
    # said once, as an answer to the click: not the on-save note ("... on save are skipped") as well
    shown = [m.message for m in bare_client.messages if "GPU" in m.message]
    assert shown == [answer["message"]], shown
