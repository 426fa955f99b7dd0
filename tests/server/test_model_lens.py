""""Find hot ops" above a whole model's nn.Module classes: the lens, the command's table, and trust."""

from __future__ import annotations

from lsprotocol import types
from lsptools import open_doc, start
from pytest_lsp import LanguageClient
from test_on_save import needs_torch

from cudalens.server.model_lens import model_classes
from tests.model.ci_model import MODEL

NO_ENTRY = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n"


async def lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    return await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri))) or []


async def test_lens_on_the_module_class_of_a_file_with_an_entry(bare_client: LanguageClient):
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "block.py", MODEL, language="python")
    (lens,) = await lenses(bare_client, uri)
    assert lens.command.title == "Find hot ops" and lens.command.command == "cudalens.findHotOps"
    assert list(lens.command.arguments) == [uri, "model_and_inputs"]
    assert lens.range.start.line == MODEL.splitlines().index("class Block(nn.Module):")
    other = open_doc(bare_client, bare_client.root / "net.py", NO_ENTRY, language="python")
    assert await lenses(bare_client, other) == []


async def test_untrusted_workspace_gets_no_lens_and_the_command_is_refused(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, {"settings": {"trust": {"trusted": False}}})
    uri = open_doc(bare_client, bare_client.root / "block.py", MODEL, language="python")
    assert await lenses(bare_client, uri) == []
    answer = await bare_client.workspace_execute_command_async(
        types.ExecuteCommandParams("cudalens.findHotOps", [uri, "model_and_inputs"]))
    assert answer["ok"] is False and "Restricted Mode" in answer["message"]


@needs_torch
async def test_find_hot_ops_puts_the_table_in_the_output(bare_client: LanguageClient):
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "block.py", MODEL, language="python")
    answer = await bare_client.workspace_execute_command_async(
        types.ExecuteCommandParams("cudalens.findHotOps", [uri, "model_and_inputs"]))
    assert answer["ok"] is True, answer
    assert "hot ops of block.py" in answer["message"]
    assert {"conv2d", "group_norm", "scaled_dot_product_attention"} <= {c["name"] for c in answer["calls"]}
    assert any("group_norm" in m.message and "share" in m.message for m in bare_client.log_messages)
    assert not (bare_client.root / ".cudalens").exists()  # no problem files: the user asked for a table


def test_entries_and_classes():
    assert model_classes(MODEL) == ([type(model_classes(MODEL)[0][0])("Block", 6)], "model_and_inputs")
    kernelbench = "import torch.nn as nn\nclass Model(nn.Module): pass\nclass ModelNew(nn.Module): pass\n" \
                  "def get_inputs(): return []\n"
    assert [c.name for c in model_classes(kernelbench)[0]] == ["Model"] and model_classes(kernelbench)[1] is None
    assert model_classes(NO_ENTRY) == ([], None)
    assert model_classes("class (:\n") == ([], None)
