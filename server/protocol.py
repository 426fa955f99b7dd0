"""The JSON-RPC layer under the handlers: pygls 2.1.1's `LanguageServerProtocol`, mended where it fails a
careless or hostile client. Each mend says which pygls behaviour it replaces; `transport.py` reads the frames.

- Every request gets an answer: malformed JSON a parse error (-32700), a message that is not JSON-RPC 2.0 an
  invalid request (-32600), params that do not parse invalid params (-32602), a request before `initialize`
  ServerNotInitialized, one after `shutdown` InvalidRequest (pygls drops all of these without a word, or logs a
  traceback; openlawlibrary/pygls#605 for the shutdown case). Problems are logged on one line. A response to a
  request that was cancelled meanwhile is dropped (openlawlibrary/pygls#621).
- A message may leave `params` out (JSON-RPC 2.0): it is read as the method's empty params where it takes none or
  only optional ones. lsprotocol's `InitializedNotification` and pygls' message for a method it does not know
  require the field, so an `initialized` without it was dropped (the session never started its watcher nor its
  launch index) and an unknown method got InvalidParams instead of MethodNotFound.
- A second `initialize` is refused with InvalidRequest and changes nothing: pygls answered it and replaced the
  workspace, so the open documents were lost and every later edit of them ignored.
- didChange edits are applied in the LSP line model, or refused (text_sync.py).
- A `$/cancelRequest` for a request already answered is not logged: pygls warns about each, and VS Code sends
  them routinely.
- A notification's handler future is forgotten once done: pygls keeps it in `_request_futures` under a fresh
  uuid forever (~1.5 KB per keystroke: the server's memory grew without bound while typing); shutdown walks a
  copy of that dict (openlawlibrary/pygls#606).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)
from pygls.protocol.language_server import lsp_method

from cudalens.server.text_sync import BadChange, apply_changes
from cudalens.server.transport import Message, Unreadable, envelope_problem, is_id

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer

logger = logging.getLogger("cudalens.server")


class _KnownCancels(logging.Filter):
    """pygls warns about every `$/cancelRequest` for a request that has already been answered; editors send those
    routinely (VS Code when a hover or a lens goes away), so they were noise in the editor's output."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Cancel notification for unknown message id")


logging.getLogger("pygls.protocol.json_rpc").addFilter(_KnownCancels())


def absent_params(method: str) -> Any:
    """What a `method` message without params (or with `null`) stands for: `{}` where all of its params' fields
    are optional, None where it takes none or is not an LSP method (pygls' generic message types and handlers
    take None). Where a field is required, None still: the message then fails as invalid params."""
    params_type = types.METHOD_TO_TYPES.get(method, (None, None, None))[2]
    if not (isinstance(params_type, type) and attrs.has(params_type)):
        return None
    return {} if all(f.default is not attrs.NOTHING for f in attrs.fields(params_type)) else None


class CudalensProtocol(LanguageServerProtocol):
    _server: CudalensServer

    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self._initialize_seen = False

    # --- what the transport reads (transport.Receiver) ------------------------------------------------
    def receive(self, event: Message | Unreadable) -> None:
        if isinstance(event, Unreadable):
            logger.error("protocol: %s", event.reason)
            self.send_error(event.msg_id, types.ErrorCodes.ParseError, event.reason)
            return
        value = event.value
        if (problem := envelope_problem(value)) is not None:
            logger.error("protocol: an invalid message: %s", problem)
            if not isinstance(value, dict) or ("id" in value and "result" not in value and "error" not in value):
                msg_id = value.get("id") if isinstance(value, dict) and is_id(value.get("id")) else None
                self.send_error(msg_id, types.ErrorCodes.InvalidRequest, problem)
            return
        message = self.structure_message(value)
        if message is not None:
            self.handle_message(message)

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        # As plain JSON: lsprotocol leaves out an `"id": null`, which a parse error must carry.
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": int(code), "message": message}})

    def send_encoded(self, body: str) -> None:
        """A message already in JSON text (publishDiagnostics' cached diagnostics), framed and written as pygls'
        `_send_data` frames and writes the messages it encodes."""
        if self.writer is None:
            logger.error("Unable to send data, no available transport!")
            return
        data = body.encode(self.CHARSET)
        if self._include_headers:
            header = f"Content-Length: {len(data)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            data = header.encode(self.CHARSET) + data
        self.writer.write(data)  # EditorWriter and asyncio's StreamWriter (start_tcp) both write at once

    def structure_message(self, data: dict[str, Any]):
        """pygls' own dispatch on the message's shape, but a message that does not parse is answered (when it is
        a request) and logged on one line; pygls logs a traceback and, for a request, never answers."""
        method, msg_id = data.get("method"), data.get("id")
        if isinstance(method, str) and data.get("params") is None:
            data = {**data, "params": absent_params(method)}
        try:
            if "id" in data and "error" in data:
                return self._converter.structure(data, types.ResponseErrorMessage)
            if "id" in data and method is not None:
                return self._converter.structure(data, self.get_message_type(method) or JsonRPCRequestMessage)
            if "id" in data:
                kind = self._result_types.pop(msg_id, None) or JsonRPCResponseMessage
                return self._converter.structure(data, kind)
            return self._converter.structure(data, self.get_message_type(method) or JsonRPCNotification)
        except Exception as exc:
            reason = "; ".join(cattrs.transform_error(exc)[:3]) if isinstance(exc, cattrs.BaseValidationError) \
                else f"{type(exc).__name__}: {str(exc)[:200]}"
            logger.error("protocol: the %s does not parse: %s", f"{method} message" if method else "response", reason)
            if method is not None and "id" in data:
                self.send_error(msg_id, types.ErrorCodes.InvalidParams, f"invalid params: {reason}")
            elif method is None and (future := self._request_futures.pop(msg_id, None)) is not None:
                future.set_exception(ValueError(f"the client's answer does not parse: {reason}"))
            return None

    def handle_message(self, message) -> None:
        method = getattr(message, "method", None)
        is_request = method is not None and hasattr(message, "id")
        if not self._initialize_seen and method not in (types.INITIALIZE, types.EXIT):
            if is_request:
                self.send_error(message.id, types.ErrorCodes.ServerNotInitialized, "the server is not initialized yet")
            elif method is not None:
                logger.warning("protocol: ignoring %s before initialize", method)
            if method is not None:
                return
        if method == types.INITIALIZE and self._initialize_seen:
            # pygls would answer it and build a new workspace without the open documents: every later edit of
            # them was then dropped as "not open". The session keeps its first initialize.
            if is_request:
                self.send_error(message.id, types.ErrorCodes.InvalidRequest, "the server is already initialized")
            return
        if method == types.INITIALIZE:
            self._initialize_seen = True
        if self._shutdown and method is not None and method != types.EXIT:
            if is_request:
                self.send_error(message.id, types.ErrorCodes.InvalidRequest,
                                f"the server is shutting down: {method} after shutdown")
            else:
                logger.warning("protocol: ignoring %s after shutdown", method)
            return
        if self._shutdown and method is None:  # a response to a request we sent before shutdown
            self._handle_response(message.id, getattr(message, "result", None), getattr(message, "error", None))
            return
        super().handle_message(message)

    def _handle_response(self, msg_id, result=None, error=None) -> None:
        """A response to a request whose future was cancelled meanwhile (by shutdown, or a cancelled task that
        awaited it) is dropped: pygls sets its result and fails with InvalidStateError (openlawlibrary/pygls#621)."""
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            logger.debug("protocol: dropped the response to %s, whose request was cancelled", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def _send_handler_result(self, future, *, msg_id) -> None:
        """A request that failed with a protocol error (an unknown command, bad arguments) is answered with it
        and logged on one line; pygls logs it with a traceback, as it does a bug."""
        if not future.cancelled() and isinstance(exc := future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            logger.error("protocol: request %s failed: %s", msg_id, exc)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        answers = isinstance(callback, partial) and callback.func == self._send_handler_result
        future = self._request_futures.get(msg_id)
        if future is not None and not answers:  # nothing else will ever take it out
            future.add_done_callback(lambda _: self._request_futures.pop(msg_id, None))

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args):
        """pygls' shutdown, over a copy of the in-flight requests: cancelling one runs its done-callbacks,
        which take it out of the dict being walked (openlawlibrary/pygls#606)."""
        if (handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True

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
