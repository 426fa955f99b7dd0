"""Settings: initializationOptions, workspace/configuration, didChangeConfiguration, [tool.cudalens]; a bad
setting is shown once and the defaults are used."""

from __future__ import annotations

from lsprotocol import types
from lsptools import codes, diagnostics_for, kernel, open_doc, start, wait_until
from pytest_lsp import LanguageClient


def republished(client: LanguageClient, uri: str, after: int):
    return [p for p in client.published[after:] if p.uri == uri]


async def test_initialization_options_ignore_a_rule(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, {"settings": {"ignore": ["CL101"]}})
    uri = open_doc(bare_client, bare_client.root / "t.cu", kernel("strided.cu"))
    assert "CL101" not in codes(await diagnostics_for(bare_client, uri, 1))


async def test_did_change_configuration_rechecks_open_documents(client: LanguageClient):
    uri = open_doc(client, client.root / "t.cu", kernel("strided.cu"))
    assert "CL101" in codes(await diagnostics_for(client, uri, 1))
    seen = len(client.published)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalens": {"select": ["CL3"]}})
    )
    again = await wait_until(lambda: republished(client, uri, seen), "a re-check after the settings changed")
    assert again[-1].version == 1
    assert "CL101" not in codes(again[-1].diagnostics)


async def test_settings_pulled_with_workspace_configuration(client: LanguageClient):
    uri = open_doc(client, client.root / "t.cu", kernel("strided.cu"))
    assert "CL101" in codes(await diagnostics_for(client, uri, 1))
    seen = len(client.published)
    client.set_configuration({"ignore": ["CL1"]}, section="cudalens")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    again = await wait_until(lambda: republished(client, uri, seen), "a re-check with the pulled settings")
    assert "CL101" not in codes(again[-1].diagnostics)


async def test_pyproject_table_is_used_and_editor_settings_override_it(bare_client: LanguageClient):
    (bare_client.root / "pyproject.toml").write_text('[tool.cudalens]\nignore = ["CL101"]\n')
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "t.cu", kernel("strided.cu"))
    assert "CL101" not in codes(await diagnostics_for(bare_client, uri, 1))
    seen = len(bare_client.published)
    # the editor's selection lays over the table as `cudalens check --select` does: a select of its own starts
    # afresh (an ignore of its own would add to the table's)
    bare_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalens": {"select": ["CL"]}})
    )
    again = await wait_until(lambda: republished(bare_client, uri, seen), "a re-check")
    assert "CL101" in codes(again[-1].diagnostics)


async def test_a_bad_setting_is_shown_once_and_defaults_are_used(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, {"settings": {"select": 5, "onSave": {"compile": "yes"}}})
    uri = open_doc(bare_client, bare_client.root / "t.cu", kernel("strided.cu"))
    assert "CL101" in codes(await diagnostics_for(bare_client, uri, 1))  # select fell back to "all"
    about_select = [m for m in bare_client.messages if "'select'" in m.message]
    assert len(about_select) == 1
    assert about_select[0].type == types.MessageType.Warning
    assert "using the default" in about_select[0].message
    assert any("'onSave.compile'" in m.message for m in bare_client.messages)
    # the same bad value again: logged, not shown again
    bare_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalens": {"select": 5, "arch": "sm_80"}})
    )
    marker = open_doc(bare_client, bare_client.root / "m.cu", kernel("copy.cu"))
    await diagnostics_for(bare_client, marker, 1)
    assert len([m for m in bare_client.messages if "'select'" in m.message]) == 1


async def test_an_absurd_number_is_shown_once_and_diagnostics_still_arrive(bare_client: LanguageClient):
    """`debounceMs: 10**12` was accepted: the analysis after an edit waited for ~30 years."""
    await start(bare_client, bare_client.root, {"settings": {"debounceMs": 10**12, "worker": {"timeoutSeconds": -5}}})
    uri = open_doc(bare_client, bare_client.root / "t.cu", kernel("copy.cu"))
    await diagnostics_for(bare_client, uri, 1)
    bare_client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=uri),
        [types.TextDocumentContentChangeWholeDocument(text=kernel("strided.cu"))],
    ))
    assert "CL101" in codes(await diagnostics_for(bare_client, uri, 2))
    shown = [m.message for m in bare_client.messages if "must be" in m.message]
    assert shown == [
        "cudalens: setting 'debounceMs' must be a whole number from 0 to 10000, not 1000000000000; using the default",
        "cudalens: setting 'worker.timeoutSeconds' must be a number from 1 to 7200, not -5; using the default",
    ]


async def test_a_pyproject_that_is_not_toml_is_shown_not_ignored(bare_client: LanguageClient):
    # a pull request's broken config must not quietly turn into "the defaults" in the editor either
    (bare_client.root / "pyproject.toml").write_text('[tool.cudalens\nignore = ["CL101"]\n')
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "t.cu", kernel("strided.cu"))
    assert "CL101" in codes(await diagnostics_for(bare_client, uri, 1))  # the defaults
    shown = [m for m in bare_client.messages if "is not valid TOML" in m.message]
    assert len(shown) == 1 and "pyproject.toml" in shown[0].message, bare_client.messages
    assert shown[0].type == types.MessageType.Warning


async def test_a_pyproject_code_that_is_no_rule_is_shown(bare_client: LanguageClient):
    (bare_client.root / "pyproject.toml").write_text('[tool.cudalens]\nselect = ["bogus"]\nfail-level = "fatal"\n')
    await start(bare_client, bare_client.root)
    uri = open_doc(bare_client, bare_client.root / "t.cu", kernel("strided.cu"))
    assert "CL101" in codes(await diagnostics_for(bare_client, uri, 1))
    assert any("'bogus'" in m.message for m in bare_client.messages), bare_client.messages
    assert any("'fail-level'" in m.message for m in bare_client.messages), bare_client.messages


async def test_a_document_above_the_size_limit_gets_the_cli_s_cl001_finding(client: LanguageClient):
    big = kernel("strided.cu") + "// generated\n" * 80_000  # 1.04 million characters: the CLI's limit too
    uri = open_doc(client, client.root / "big.cu", big)
    found = await diagnostics_for(client, uri, 1)
    assert codes(found) == ["CL001"] and "1.0 million characters" in found[0].message
    assert found[0].severity == types.DiagnosticSeverity.Information
