"""`cudalens.showReport`: the report page of an open document, in the user's cache, its path in the answer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from lsptools import kernel, open_doc, start
from pytest_lsp import LanguageClient


async def test_show_report_writes_the_page_and_answers_its_path(bare_client: LanguageClient) -> None:
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "strided.cu", kernel("strided.cu"))
    answer = await bare_client.workspace_execute_command_async(
        types.ExecuteCommandParams("cudalens.showReport", [uri]))
    assert answer["ok"] is True, answer
    page = Path(answer["path"])
    assert page.name == "strided.cu.report.html" and page.parent.parent.name == "reports"
    assert not (bare_client.root / "strided.cu.report.html").exists()  # nothing written beside the sources
    text = page.read_text(encoding="utf-8")
    assert "scale_columns" in text and "Predicted memory-bound" in text and "<script" not in text
    answer = await bare_client.workspace_execute_command_async(types.ExecuteCommandParams("cudalens.showReport", []))
    assert answer["ok"] is False and "[uri]" in answer["message"]


async def test_two_projects_files_of_one_name_get_two_pages(bare_client: LanguageClient) -> None:
    """The pages in the cache are keyed by the file's full path: `one/kernel.cu` and `two/kernel.cu` each keep
    their own (by name alone, the second overwrote the first)."""
    await start(bare_client, bare_client.root)
    texts = {"one": kernel("strided.cu"), "two": kernel("strided.cu").replace("scale_columns", "scale_rows_two")}
    pages = {}
    for project, text in texts.items():
        uri = open_doc(bare_client, bare_client.root / project / "kernel.cu", text)
        answer = await bare_client.workspace_execute_command_async(
            types.ExecuteCommandParams("cudalens.showReport", [uri]))
        assert answer["ok"] is True, answer
        pages[project] = Path(answer["path"])
    assert pages["one"] != pages["two"] and {p.name for p in pages.values()} == {"kernel.cu.report.html"}
    assert "scale_rows_two" not in pages["one"].read_text(encoding="utf-8")
    assert "scale_rows_two" in pages["two"].read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
async def test_without_a_gpu_the_page_says_whose_peaks_and_why(bare_client: LanguageClient) -> None:
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "strided.cu", kernel("strided.cu"))
    answer = await bare_client.workspace_execute_command_async(
        types.ExecuteCommandParams("cudalens.showReport", [uri]))
    text = Path(answer["path"]).read_text(encoding="utf-8")
    line = text[text.index('<p class="muted" id="gpu">'):].split("</p>")[0]
    assert "Peaks of the NVIDIA H200" in line and "— no GPU on this machine (" in line, line
    assert "the roofs and verdicts are predictions for that GPU" in line, line
