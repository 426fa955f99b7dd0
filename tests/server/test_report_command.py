"""`cudalens.showReport`: the report page of an open document, in the user's cache, its path in the answer."""

from __future__ import annotations

from pathlib import Path

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
    assert page.name == "strided.cu.report.html" and page.parent.name == "reports"
    assert not (bare_client.root / "strided.cu.report.html").exists()  # nothing written beside the sources
    text = page.read_text(encoding="utf-8")
    assert "scale_columns" in text and "Predicted memory-bound" in text and "<script" not in text
    answer = await bare_client.workspace_execute_command_async(types.ExecuteCommandParams("cudalens.showReport", []))
    assert answer["ok"] is False and "[uri]" in answer["message"]
