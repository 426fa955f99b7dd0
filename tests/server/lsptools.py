"""Helpers for driving the real server (`python -m cudalens.server`) with pytest-lsp."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

KERNELS = Path(__file__).parent / "kernels"
# Guards against a hang only (the server normally answers in milliseconds): not a speed assertion.
WAIT_S = 60.0


def record_diagnostics(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)


def answer_message_request(client: LanguageClient, params: types.ShowMessageRequestParams):
    """Records the question; answers with `client.choice` (None: the user dismissed it)."""
    client.asked.append(params)
    return next((a for a in params.actions or [] if a.title == client.choice), None)


def apply_edit(client: LanguageClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
    client.edits.append(params)
    return types.ApplyWorkspaceEditResult(applied=True)


def record_status(client: LanguageClient, params) -> None:
    client.statuses.append(params)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # every publishDiagnostics, in order, with its version
    client.asked, client.choice, client.edits = [], None, []
    client.statuses = []  # cudalens/status notifications
    client.feature("cudalens/status")(lambda params: record_status(client, params))
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record_diagnostics
    features[types.WINDOW_SHOW_MESSAGE_REQUEST] = answer_message_request
    features[types.WORKSPACE_APPLY_EDIT] = apply_edit
    register_lsp_features(client, features)
    return client


def server_command(log_file: str = os.environ.get("CUDALENS_TEST_LOG", "/dev/null")) -> list[str]:
    return [sys.executable, "-m", "cudalens.server", "--log-file", log_file, "--log-level", "debug"]


CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)


def capabilities(pull: bool = False) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            did_change_configuration=types.DidChangeConfigurationClientCapabilities(),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True) if pull else None,
        ),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=types.DiagnosticClientCapabilities() if pull else None,
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(value_set=["quickfix", "source"])
                ),
                is_preferred_support=True,
            ),
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
    )


async def start(client: LanguageClient, root: Path, options=None, pull: bool = False) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(pull),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)],
            initialization_options=options,
        )
    )


def kernel(name: str) -> str:
    return (KERNELS / name).read_text()


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1, language: str = "cuda-cpp") -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, version, text))
    )
    return uri


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def wait_until(predicate, what: str, timeout: float = WAIT_S):
    async def poll():
        while not (value := predicate()):
            await asyncio.sleep(0.01)
        return value

    try:
        return await asyncio.wait_for(poll(), timeout)
    except TimeoutError:
        pytest.fail(f"gave up waiting for {what}")


async def diagnostics_for(client: LanguageClient, uri: str, version: int) -> list[types.Diagnostic]:
    """The diagnostics published for `uri` at `version` (waits for them)."""
    params = await wait_until(
        lambda: next((p for p in reversed(client.published) if p.uri == uri and p.version == version), None),
        f"diagnostics for {uri} version {version}",
    )
    return list(params.diagnostics)


def codes(diagnostics) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Applies LSP edits (UTF-16 positions) the way an editor does: from the last to the first."""
    lines = text.splitlines(keepends=True)

    def offset(pos: types.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        before = sum(len(line) for line in lines[: pos.line])
        line, units, index = lines[pos.line], 0, 0
        while index < len(line) and units < pos.character:
            units += 2 if ord(line[index]) > 0xFFFF else 1
            index += 1
        return before + index

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
        lines = text.splitlines(keepends=True)
    return text
