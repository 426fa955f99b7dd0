"""What a long session must not keep (benchmarks/server_memory.py measures the memory itself): a handled
notification leaves no future behind (pygls 2.1.1 kept one per keystroke, ~2 KB, forever), and a closed document
leaves nothing in the server's per-document state. The server is driven in-process, through its protocol object,
so its state can be looked at."""

from __future__ import annotations

import asyncio
import logging

from cudalens.server.app import create_server
from cudalens.server.transport import Message

KERNEL = "__global__ void k(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i * 2] = 0; }\n"


class Sink:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


async def test_edits_and_closed_documents_leave_nothing_behind(tmp_path):
    server = create_server()
    server.protocol.set_writer(Sink())
    cudalens_logger = logging.getLogger("cudalens")
    handlers = list(cudalens_logger.handlers)

    def send(method: str, params: dict, msg_id: int | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if msg_id is not None:
            message["id"] = msg_id
        server.protocol.receive(Message(message))

    async def analysed(uri: str) -> None:
        while (state := server.service.documents.get(uri)) is not None and (
                state.result is None or state.result.version != state.version):
            await asyncio.sleep(0.005)

    try:
        send("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, 1)
        send("initialized", {})
        uris = [(tmp_path / f"f{n}.cu").as_uri() for n in range(20)]
        for uri in uris:
            send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "cuda", "version": 1,
                                                           "text": KERNEL}})
        for version in range(2, 52):
            send("textDocument/didChange", {"textDocument": {"uri": uris[0], "version": version}, "contentChanges": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": " "}]})
            await analysed(uris[0])
        for uri in uris:
            await analysed(uri)
            send("textDocument/didClose", {"textDocument": {"uri": uri}})
        await asyncio.sleep(0.05)
        assert server.protocol._request_futures == {}
        service = server.service
        assert len(service.documents) == 0 and not service._analyzers and not service._converted
        assert not service.scheduler._last_request and not service.scheduler.pending(uris[0])
        assert not server.workspace.text_documents
    finally:
        server.stop_everything()
        for handler in cudalens_logger.handlers[:]:
            if handler not in handlers:
                cudalens_logger.removeHandler(handler)
