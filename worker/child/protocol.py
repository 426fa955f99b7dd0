"""The messages between the parent (`worker_client`) and the worker process (`worker_main`): JSON lines.

Standard library only, and of ours only typed_json.py beside it (the values' checks): the worker loads both
by path under an interpreter that may lack cudalens. Each line is `{"kind": <kind>, "payload": {...}}`; the
kinds are a closed set, each with one dataclass payload. An unknown kind, a missing or unknown field, or a value
not of the field's type is a `ProtocolError`, never skipped. Only JSON crosses: a failed job carries its
traceback as a string.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, field
from typing import TYPE_CHECKING, Literal

from . import typed_json

PROTOCOL_VERSION = 1

JobStatus = Literal["ok", "error", "timeout", "crash", "cancelled"]


class ProtocolError(ValueError):
    """A line that is not one of the protocol's messages."""


@dataclass(frozen=True)
class Hello:
    """Worker → parent, once, right after start: what the worker runs on."""

    protocol_version: int
    pid: int
    python: str  # "3.12.3"
    executable: str
    torch: str | None  # None: torch is not installed for this interpreter
    torch_cuda: str | None  # the CUDA version torch was built with; None for CPU builds
    driver: str | None  # "580.95.05"-style or the CUDA driver API version ("13.0"); None: no driver
    gpu: str  # the first GPU's name, or "no GPU"
    gpu_count: int = 0


@dataclass(frozen=True)
class JobRequest:
    """Parent → worker: run the job module `<kind>_job.py` with `payload`."""

    id: str
    kind: str
    payload: dict = field(default_factory=dict)
    timeout_s: float = 60.0


def seconds_text(payload: dict, sep: str = ", ") -> str:
    """A job's own split of its time (a warm-up's or a test's `seconds`), for a log line: `torch 4.7 s, …`."""
    return sep.join(f"{k} {v:.1f} s" for k, v in (payload.get("seconds") or {}).items())


@dataclass(frozen=True)
class JobResult:
    """Worker → parent (status ok/error), or made by the parent itself (timeout/crash/cancelled)."""

    id: str
    kind: str
    status: JobStatus
    payload: dict = field(default_factory=dict)
    error: str | None = None  # a traceback string, or what happened to the worker
    duration_s: float = 0.0
    context_broken: bool = False  # the CUDA context (or a clock) is unusable; the worker retires after this job

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Progress:
    """Worker → parent, any number of times during a job. Each one also sets how long the job may run from now
    on: `limit_s` seconds (a candidate's call, bounded by the reference's measured time), or, when None, until
    the request's own deadline. Never later than the request's deadline."""

    id: str
    message: str
    fraction: float | None = None
    limit_s: float | None = None


@dataclass(frozen=True)
class Prepare:
    """Parent → worker: a job of `kind` with `payload` is coming (its `JobRequest` follows once the worker is free).
    The job module's `prepare(payload)`, where it has one, starts now, beside the job that runs, what needs nothing
    that job is making ready: a build's compiles while the warm-up imports torch. Never answered."""

    kind: str
    payload: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Shutdown:
    """Parent → worker: finish nothing more, exit now."""

    reason: str = ""


@dataclass(frozen=True)
class Failure:
    """Either side → the other: the line received was not a valid message (the receiver then stops)."""

    message: str


if TYPE_CHECKING:  # an annotation only: the worker may run on a Python older than 3.10
    Message = Hello | JobRequest | JobResult | Progress | Prepare | Shutdown | Failure

KINDS: dict[str, type] = {
    "hello": Hello,
    "job": JobRequest,
    "result": JobResult,
    "progress": Progress,
    "prepare": Prepare,
    "shutdown": Shutdown,
    "failure": Failure,
}
_KIND_OF: dict[type, str] = {cls: kind for kind, cls in KINDS.items()}

def encode(message: Message) -> str:
    """One line of JSON, without the newline."""
    kind = _KIND_OF.get(type(message))
    if kind is None:
        raise ProtocolError(f"not a protocol message: {type(message).__name__}")
    return json.dumps({"kind": kind, "payload": asdict(message)}, separators=(",", ":"), allow_nan=True)


def decode(line: str | bytes) -> Message:
    """The message on one line; `ProtocolError` for anything else."""
    try:
        data = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not JSON: {str(line)[:200]!r} ({exc})") from None
    if not isinstance(data, dict) or set(data) != {"kind", "payload"}:
        raise ProtocolError(f"a message is {{'kind', 'payload'}}, got {str(line)[:200]!r}")
    kind, payload = data["kind"], data["payload"]
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown message kind {kind!r} (known: {', '.join(KINDS)})")
    if not isinstance(payload, dict):
        raise ProtocolError(f"payload of {kind!r} must be an object")
    known = typed_json.field_hints(cls)
    unknown = set(payload) - set(known)
    if unknown:
        raise ProtocolError(f"unknown field(s) {sorted(unknown)} in {kind!r}")
    values = {}
    for name, (f, hint) in known.items():
        if name not in payload:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ProtocolError(f"missing field {name!r} in {kind!r}")
            continue
        try:
            values[name] = typed_json.coerce(payload[name], hint, f)
        except typed_json.TypeMismatch as exc:
            raise ProtocolError(
                f"field {name!r} of {kind!r} has a bad value {payload[name]!r} (expected {exc.expected})"
            ) from None
    return cls(**values)
