"""The LSP base protocol (`Content-Length` framing) read forgivingly and within bounds, and the JSON-RPC envelope
of what it reads checked, so that no byte sequence costs the server its hearing, its memory or a traceback.

pygls 2.1.1's reader (`pygls/io_.py`, `run_async`) matches exactly `Content-Length: N\\r\\n`, so a lowercase
header or LF-only line ends make it skip the frame, and a length that is off leaves it out of step with every
later frame: the server stays alive but never answers again. It reads a body with one `read(N)`, so
`Content-Length: 10000000000000` is a MemoryError. It parses with `object_hook=structure_message`, so a message
without `"jsonrpc"` reaches `handle_message` as a dict and fails with a traceback, and malformed JSON is only
logged, never answered. `FrameReader` replaces that reader (CudalensServer.start_io/start_tcp):

- header names in any case, `\\r\\n` or `\\n` line ends, other headers ignored;
- a body larger than MAX_MESSAGE_BYTES is refused without being buffered; the reader then skips ahead to the
  next `Content-Length` line, as it does after any line that is not a header (it keeps at most a header line);
- a length too long swallows the start of the next frame: the bytes after the JSON value go back to be read
  again; a length too short leaves the rest of the body in front of the next header, which is skipped up to it.

It is sans-IO: `feed(bytes)` returns what arrived, so it is tested without a process; `serve` drives it.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

logger = logging.getLogger("cudalens.server")

MAX_MESSAGE_BYTES = 128 * 2**20  # a 100 MB file's didOpen still fits; beyond, the message is refused
MAX_HEADER_LINE = 8192
READ_CHUNK = 65536

_MARKER = b"content-length"
_CONTENT_LENGTH = re.compile(rb"[ \t]*content-length[ \t]*:[ \t]*(\S*)[ \t]*", re.I)
_HEADER = re.compile(rb"[!#-'*+.0-9A-Z^-z|~-]+[ \t]*:.*")  # RFC 7230 token, a colon, a value
_FIND_MARKER = re.compile(rb"content-length[ \t]*:", re.I)
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\\\]|\\\\.){0,200}")')
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Message:
    """A JSON value read from one frame."""

    value: Any


@dataclass(frozen=True)
class Unreadable:
    """A frame whose body is not JSON: answered with a parse error, for `msg_id` when one can be read from it."""

    reason: str
    msg_id: int | str | None


class FrameReader:
    def __init__(self, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._length: int | None = None  # the Content-Length of the headers being read
        self._in_headers = False  # a header line of the frame being read was seen
        self._body: int | None = None  # the length of the body being read, once the headers ended
        self._skipping = False  # bytes are being dropped up to the next Content-Length line

    def feed(self, data: bytes) -> list[Message | Unreadable]:
        self._buf += data
        out: list[Message | Unreadable] = []
        while True:
            if self._body is not None:
                if len(self._buf) < self._body:
                    return out
                body = bytes(self._buf[: self._body])
                del self._buf[: self._body]
                self._body = None
                out.append(self._decode(body))
                continue
            end = self._buf.find(b"\n")
            if end < 0:
                if len(self._buf) > MAX_HEADER_LINE:
                    self._skip_to_marker(len(self._buf))
                return out
            line = bytes(self._buf[:end]).rstrip(b"\r")
            del self._buf[: end + 1]
            self._header_line(line)

    # --- headers ---------------------------------------------------------------------------------------
    def _header_line(self, line: bytes) -> None:
        if not line:
            if self._length is not None:
                self._body, self._length, self._in_headers = self._length, None, False
            elif self._in_headers:
                logger.error("protocol: a frame without Content-Length; skipped")
                self._in_headers = False
            return
        if (length := _CONTENT_LENGTH.fullmatch(line)) is not None:
            self._skipping = False
            self._in_headers = True
            value = length.group(1)
            if not value.isdigit():
                self._bad_frame(f"Content-Length {value[:40]!r} is not a number")
            elif len(value) > 15 or int(value) > self.max_bytes:
                self._bad_frame(f"a message of {value[:40].decode()} bytes is over the limit of {self.max_bytes:,}")
            else:
                self._length = int(value)
            return
        found = _FIND_MARKER.search(line, 1)
        if found is not None:
            self._header_line(line[found.start():])  # the rest of a body whose Content-Length was too short
            return
        if _HEADER.fullmatch(line) is not None and not self._skipping:
            self._in_headers = True  # Content-Type, or a header we do not know
            return
        if not self._skipping:
            logger.error("protocol: skipping bytes that are not a header: %r", line[:60])
        self._skipping, self._length, self._in_headers = True, None, False

    def _bad_frame(self, reason: str) -> None:
        logger.error("protocol: %s; skipping to the next frame", reason)
        self._skipping, self._length, self._in_headers = True, None, False

    def _skip_to_marker(self, upto: int) -> None:
        """A line too long to be a header: drop it up to a Content-Length in it, or keep only its tail (which
        may be the start of one)."""
        found = _FIND_MARKER.search(self._buf, 1, upto)
        if found is not None:
            del self._buf[: found.start()]
            return
        if not self._skipping:
            logger.error("protocol: skipping %d bytes that are not a header", upto)
        self._skipping, self._length, self._in_headers = True, None, False
        del self._buf[: upto - len(_MARKER)]

    # --- bodies ----------------------------------------------------------------------------------------
    def _decode(self, body: bytes) -> Message | Unreadable:
        try:
            text = body.decode("utf-8")
            start = len(text) - len(text.lstrip())
            value, end = _DECODER.raw_decode(text, start)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            self._unread(body[_resume_at(body):])
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            return Unreadable(f"the message is not JSON ({reason})", _guess_id(body))
        rest = text[end:]
        if rest.strip():
            logger.error("protocol: Content-Length was %d, the message ended after %d; reading on from there",
                         len(body), len(body) - len(rest.encode("utf-8")))
            self._unread(rest.lstrip().encode("utf-8"))
        return Message(value)

    def _unread(self, data: bytes) -> None:
        if data:
            self._buf[:0] = data


def _resume_at(body: bytes) -> int:
    """Where in an unreadable body the next frame may start: a Content-Length header in it (the length was too
    long), or the tail that begins one (`...}Conte`); else its end."""
    found = _FIND_MARKER.search(body, 1)
    if found is not None:
        return found.start()
    lower = body[-len(_MARKER):].lower()
    for k in range(len(lower), 0, -1):
        if _MARKER.startswith(lower[-k:]):
            return len(body) - k
    return len(body)


def _guess_id(body: bytes) -> int | str | None:
    """The request id of a message that is not JSON, so the client that waits for it gets its answer."""
    found = _ID.search(body)
    if found is None:
        return None
    raw = found.group(1)
    if raw.startswith(b'"'):
        try:
            return json.loads(raw)
        except ValueError:
            return None
    return int(raw)


# --- the JSON-RPC envelope -------------------------------------------------------------------------------
def is_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def envelope_problem(value: object) -> str | None:
    """Why a JSON value is not a JSON-RPC 2.0 request, notification or response; None when it is one."""
    if not isinstance(value, dict):
        return f"a message must be an object, not {type(value).__name__}"
    if value.get("jsonrpc") != "2.0":
        return 'the message lacks "jsonrpc": "2.0"'
    if "method" in value:
        if not isinstance(value["method"], str):
            return '"method" must be a string'
        if "id" in value and not is_id(value["id"]):
            return '"id" must be a number or a string'
        if "params" in value and not isinstance(value["params"], (dict, list)) and value["params"] is not None:
            return '"params" must be an object or an array'
        return None
    if "id" not in value:
        return 'the message has neither "method" nor "id"'
    if "result" not in value and "error" not in value:
        return 'a response needs "result" or "error"'
    return None


class Receiver(Protocol):
    def receive(self, event: Message | Unreadable) -> None: ...


async def serve(read: Callable[[], Awaitable[bytes]], receiver: Receiver, stop: threading.Event) -> None:
    """Read frames until the stream ends or `stop` is set, handing each to `receiver`."""
    frames = FrameReader()
    while not stop.is_set():
        data = await read()
        if not data:
            return
        for event in frames.feed(data):
            try:
                receiver.receive(event)
            except Exception:  # a bug in handling one message must not end the session (pygls' loop did this too)
                logger.exception("protocol: handling a message failed")
            if stop.is_set():
                return
