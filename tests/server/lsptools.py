"""Helpers for driving the real server (`python -m cudalens.server`) with pytest-lsp."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
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
    """Kept in `status_payload`'s shape (a message only where there is one), whichever form the client decoded."""
    if not isinstance(params, dict):
        params = {k: getattr(params, k, None) for k in ("gpu", "busy", "message")}
    client.statuses.append({k: v for k, v in params.items() if v is not None or k == "gpu"})


def show_proposal(client: LanguageClient, params) -> dict:
    """Records a `cudalens/showProposal` request (asked only of a client that declares it: `start(...,
    shows_proposals=True)`), as a dict whichever form the client decoded."""
    if not isinstance(params, dict):
        params = {k: getattr(params, k, None) for k in ("uri", "id", "text", "title")}
    client.proposals_shown.append(params)
    return {}


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # every publishDiagnostics, in order, with its version
    client.asked, client.choice, client.edits = [], None, []
    client.statuses = []  # cudalens/status notifications
    client.proposals_shown = []  # cudalens/showProposal requests
    client.feature("cudalens/status")(lambda params: record_status(client, params))
    client.feature("cudalens/showProposal")(lambda params: show_proposal(client, params))
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record_diagnostics
    features[types.WINDOW_SHOW_MESSAGE_REQUEST] = answer_message_request
    features[types.WORKSPACE_APPLY_EDIT] = apply_edit
    register_lsp_features(client, features)
    return client


def server_command(log_file: str = os.environ.get("CUDALENS_TEST_LOG", "/dev/null")) -> list[str]:
    return [sys.executable, "-m", "cudalens.server", "--log-file", log_file, "--log-level", "debug"]


CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)


def capabilities(pull: bool = False, shows_proposals: bool = False) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        experimental={"cudalens": {"showProposal": True}} if shows_proposals else None,
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


async def start(client: LanguageClient, root: Path, options=None, pull: bool = False,
                shows_proposals: bool = False) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(pull, shows_proposals),
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


def line_starts(text: str) -> list[int]:
    """Where each line starts by LSP's rule (a line ends at \\n, \\r\\n or \\r), written out char by char like
    vscode-languageserver-textdocument, apart from the server's own line model."""
    starts, i = [0], 0
    while i < len(text):
        if text[i] == "\r" and text[i + 1 : i + 2] == "\n":
            i += 1
        if text[i] in "\r\n":
            starts.append(i + 1)
        i += 1
    return starts


def lsp_offset(text: str, pos: types.Position) -> int:
    """An LSP position (UTF-16 units) as an index in `text`, as an editor reads it."""
    starts = line_starts(text)
    if pos.line >= len(starts):
        return len(text)
    index, end = starts[pos.line], starts[pos.line + 1] if pos.line + 1 < len(starts) else len(text)
    while end > index and text[end - 1] in "\r\n":
        end -= 1
    units = 0
    while index < end and units < pos.character:
        units += 2 if ord(text[index]) > 0xFFFF else 1
        index += 1
    return index


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Applies LSP edits the way an editor does: every range read against the original text, the last first."""
    spans = sorted(((lsp_offset(text, e.range.start), lsp_offset(text, e.range.end), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


class RawConnection:
    """Bytes straight to a real server process's stdin, for messages no well-behaved client would send; its
    stderr is kept (`stderr_text()`) to look for tracebacks."""

    def __init__(self, log_file: str = "/dev/null", command: list[str] | None = None,
                 env: dict[str, str] | None = None, cwd: Path | None = None, new_session: bool = False) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(command or server_command(log_file), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env, cwd=cwd,
                                     start_new_session=new_session)
        self.received: list[dict] = []
        self._ids = itertools.count(1000)
        self._queue: queue.Queue[dict | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _read(self) -> None:
        """In a thread: every message the server writes, into the queue; None once its output ends."""
        while True:
            length = 0
            while (line := self.proc.stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                self._queue.put(None)
                return
            self._queue.put(json.loads(self.proc.stdout.read(length)))

    def receive(self, timeout: float = WAIT_S) -> dict:
        try:
            message = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the server said nothing for {timeout} s") from None
        assert message is not None, "the server closed its output"
        self.received.append(message)
        return message

    def response_to(self, msg_id, timeout: float = WAIT_S) -> dict:
        while (message := self.receive(timeout)).get("id") != msg_id or "method" in message:
            pass
        return message

    def request(self, method: str, params=None) -> dict:
        msg_id = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.response_to(msg_id)

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, root: Path, process_id: int | None = None) -> dict:
        answer = self.request("initialize", {"processId": process_id, "rootUri": root.as_uri(), "capabilities": {
            "workspace": {"workspaceEdit": {"documentChanges": True}},
            "textDocument": {"publishDiagnostics": {"versionSupport": True}}}})
        self.notify("initialized", {})
        return answer

    def open(self, path: Path, text: str, language: str = "cuda-cpp") -> str:
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": language, "version": 1, "text": text}})
        return path.as_uri()

    def diagnostics(self, uri: str, version: int) -> list[dict]:
        """The diagnostics published for `uri` at `version` (waits for them)."""
        while True:
            for m in self.received:
                p = m.get("params") or {}
                if m.get("method") == "textDocument/publishDiagnostics" and p.get("uri") == uri \
                        and p.get("version") == version:
                    return p["diagnostics"]
            self.receive()

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def close(self) -> int:
        self.send({"jsonrpc": "2.0", "id": 999, "method": "shutdown"})
        self.response_to(999)
        self.send({"jsonrpc": "2.0", "method": "exit"})
        return self.proc.wait(timeout=60)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture(name="raw")
def raw_fixture(tmp_path):
    """`raw`: a RawConnection to an initialized server whose workspace is `tmp_path` (a test module imports
    `raw_fixture` to have it)."""
    conn = RawConnection()
    assert "capabilities" in conn.initialize(tmp_path)["result"]
    yield conn
    conn.kill()
