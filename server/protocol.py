"""The JSON-RPC layer under the handlers: pygls 2.1.1's `LanguageServerProtocol`, mended where it fails a
careless client. Each mend says which pygls behaviour it replaces.

- didChange edits are applied in the LSP line model, or refused (text_sync.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from cudalens.server.text_sync import BadChange, apply_changes

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer

logger = logging.getLogger("cudalens.server")


class CudalensProtocol(LanguageServerProtocol):
    _server: CudalensServer

    def structure_message(self, data: dict[str, Any]):
        """pygls drops a request whose params do not parse without answering it, and the client waits
        forever; answer it with the error."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data and isinstance(data["id"], (int, str)):
                self._send_response(data["id"], error=exc.to_response_error())
            raise

    # --- documents -----------------------------------------------------------------------------------
    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        """The edits applied by LSP's rules (text_sync.py) or not at all; a change to a document that was never
        opened is a client's mistake: logged, not failed."""
        uri = params.text_document.uri
        doc = self.workspace.text_documents.get(unquote(uri))
        if doc is None:
            logger.warning("ignoring a change to %s, which is not open", uri)
            return
        try:
            text = apply_changes(doc.source, params.content_changes, self.workspace.position_codec)
        except BadChange as exc:
            logger.error("ignoring the change to %s (version %s): %s; keeping the last good text",
                         uri, params.text_document.version, exc)
            self._server.bad_change(uri, str(exc))
            return
        doc.apply_change(types.TextDocumentContentChangeWholeDocument(text=text))
        doc.version = params.text_document.version
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None
