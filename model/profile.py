"""A whole model's calls ranked by time (`cudalens model`, the editor's "Find hot ops"): the parent side of
`jobs/model_profile_job.py`, its result as typed values, and the table.

The job runs the user's file in a worker (its own process group, a timeout, no secret in its environment);
only JSON comes back. docs/model.md describes the conventions and the columns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudalens.worker.run_job import run_job

_TARGET = re.compile(r"^(?P<path>.+?):(?P<entry>[A-Za-z_]\w*)$")
_SHORT_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int64": "i64",
                 "int32": "i32", "bool": "bool", "uint8": "u8", "int8": "i8"}


class ModelError(Exception):
    """The model could not be profiled (a bad file, no entry, the worker failed): one line for the user."""


@dataclass(frozen=True)
class KernelTime:
    name: str
    calls: float
    us: float


@dataclass(frozen=True)
class ModelCall:
    """One signature: a torch function with the same argument shapes, dtypes, strides and values."""

    id: int
    function: str  # torch.nn.functional.group_norm
    name: str  # group_norm
    module: str  # the module that made the first such call: blocks.0.norm
    calls: float  # per forward
    us: float  # per forward, on the profile's clock (device time on a GPU, CPU time on a CPU)
    share: float
    advice: str  # yes | maybe | unlikely | no (lib/op_advice.py)
    why: str
    arguments: tuple[tuple[str, Any], ...]
    kernels: tuple[KernelTime, ...] = ()
    writable: bool = True  # a problem file can be written for it

    @classmethod
    def from_json(cls, d: dict) -> ModelCall:
        return cls(
            id=d["id"], function=d["function"], name=d["name"], module=d["module"], calls=d["calls"], us=d["us"],
            share=d["share"], advice=d["advice"], why=d["why"],
            arguments=tuple((name, want) for name, want in d["arguments"]),
            kernels=tuple(KernelTime(k["name"], k["calls"], k["us"]) for k in d.get("kernels", ())),
            writable=d.get("writable", True),
        )

    def shapes(self) -> str:
        """The tensors (shape, dtype; strides where not contiguous), then the other arguments."""
        tensors, values = [], []
        for name, want in self.arguments:
            for meta in ([want["tensor"]] if "tensor" in want else want.get("tensors", [])):
                tensors.append(_meta_text(meta))
            if "value" in want and want["value"] is not None and not name.startswith("arg"):
                values.append(f"{name}={want['value']}")
            elif "value" in want and want["value"] is not None:
                values.append(str(want["value"]))
        return ", ".join(tensors + values)


def _meta_text(meta: dict) -> str:
    shape, stride = meta["shape"], meta["stride"]
    text = "×".join(map(str, shape)) or "scalar"
    text += " " + _SHORT_DTYPES.get(meta["dtype"], meta["dtype"])
    if stride != _contiguous(shape):
        text += " strides " + "·".join(map(str, stride))
    return text


def _contiguous(shape: list[int]) -> list[int]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return out[::-1]


@dataclass(frozen=True)
class ModelChain:
    """A call whose output's only reader is one elementwise call (`group_norm` → `silu`): one problem for the
    pair, `--problem group_norm+silu`, one kernel swapped in for both where a graph shows the same pair."""

    name: str  # group_norm+silu
    producer: int  # the calls' ids (ModelCall.id)
    consumer: int
    input: str  # the consumer's argument that takes the producer's output
    calls: float  # pairs a forward
    us: float  # the two calls' time, per forward
    share: float

    @classmethod
    def from_json(cls, d: dict) -> ModelChain:
        producer, consumer = d["pair"]
        return cls(d["name"], producer, consumer, d["then"]["input"], d["calls"], d["us"], d["share"])


@dataclass(frozen=True)
class ModelProfile:
    path: str
    device: str
    clock: str  # "device" or "cpu": what the times are
    forward_ms: float  # an unprofiled forward's wall time
    how: str  # how the model was built: "model_and_inputs()", "Model/get_inputs"
    calls: tuple[ModelCall, ...]
    problems: tuple[str, ...]  # problem files written, best candidate first
    chains: tuple[ModelChain, ...] = ()  # by time

    @classmethod
    def from_json(cls, path: str, d: dict) -> ModelProfile:
        return cls(path, d["device"], d["clock"], d["forward_ms"], d["how"],
                   tuple(ModelCall.from_json(r) for r in d["rows"]), tuple(p["path"] for p in d["problems"]),
                   tuple(ModelChain.from_json(c) for c in d.get("chains", ())))


def split_target(target: str) -> tuple[str, str | None]:
    """`FILE[:ENTRY]` as (file, entry)."""
    m = _TARGET.match(target)
    if m and not Path(target).exists():
        return m["path"], m["entry"]
    return target, None


def profile_model(
    path: str, entry: str | None = None, *, device: str | None = None, python: str | None = None,
    timeout_s: float = 600.0, out_dir: str | None = None, problems: int = 3, names: tuple[str, ...] = (),
    iters: int = 5, warmup: int = 2,
    on_progress: Callable[[str, float | None], None] | None = None,
) -> ModelProfile:
    """Profile the model `path` builds (docs/model.md) in a worker; `out_dir`: write problem files there for
    the `problems` best candidates and every call of a function in `names`. Raises `ModelError`."""
    file = Path(path)
    if not file.is_file():
        raise ModelError(f"{path}: no such file")
    if file.suffix != ".py":
        raise ModelError(f"{path}: not a Python file (it builds the model and its inputs: docs/model.md)")
    payload = {"path": str(file.resolve()), "entry": entry, "device": device, "iters": iters, "warmup": warmup,
               "out_dir": str(Path(out_dir).resolve()) if out_dir else None, "problems": problems,
               "names": list(names)}
    outcome = run_job("model_profile", payload, timeout_s=timeout_s, python=python, on_progress=on_progress,
                      cwd=str(file.resolve().parent))
    if outcome.status != "ok":
        raise ModelError(f"{path}: the model did not run: {last_line(outcome.error)}")
    if outcome.payload.get("error"):
        raise ModelError(outcome.payload["error"])
    return ModelProfile.from_json(str(file), outcome.payload)


def last_line(error: str | None) -> str:
    """What a traceback or a worker's report says in its last meaningful line."""
    lines = [line.strip() for line in (error or "").splitlines() if line.strip() and not line.startswith("---")]
    return lines[-1] if lines else "no reason given"


def render_table(profile: ModelProfile, top: int = 15) -> str:
    clock = "GPU time" if profile.clock == "device" else "CPU time"
    # Both figures in the rows' unit: a forward's wall time without the profiler, and the sum the rows share out
    # (the profiler's cost, and on a CPU every thread's time, set them apart: "0.83 ms a forward" over a row of
    # 2,208 µs/fwd read as a contradiction).
    profiled = sum(c.us for c in profile.calls)
    lines = [f"{profile.path}: {profile.how} on {profile.device}; a forward: {profile.forward_ms * 1000:,.0f} µs "
             f"unprofiled, {profiled:,.0f} µs of {clock} profiled",
             f"calls by {clock}, µs per forward (self time of the ops and kernels inside each; they add up to "
             f"{profiled:,.0f})"]
    header = ("#", "op", "module", "share", "calls", "µs/fwd", "kernel?", "shapes")
    rows = [header]
    for i, call in enumerate(profile.calls[:top], 1):
        rows.append((str(i), call.name, call.module or "-", f"{call.share:6.1%}", f"{call.calls:g}",
                     f"{call.us:,.0f}", call.advice, call.shapes()))
    widths = [max(len(r[c]) for r in rows) for c in range(len(header) - 1)]
    for r in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)) + "  " + r[-1])
    left = len(profile.calls) - top
    if left > 0:
        rest = sum(c.share for c in profile.calls[top:])
        lines.append(f"… {left} more calls, {rest:.1%} of the time")
    for call in profile.calls[:top]:
        if call.advice in ("yes", "maybe") and call.share >= 0.01:
            lines.append(f"  {call.name}: {call.advice} — {call.why}")
            for k in call.kernels[:2]:
                lines.append(f"      {k.name[:100]}  {k.us:,.0f} µs")
    modules = {c.id: c.module for c in profile.calls}
    for chain in profile.chains[:top]:
        lines.append(f"chain {chain.name} ({modules.get(chain.producer) or '-'}): its output's only reader, "
                     f"{chain.calls:g} a forward, {chain.us:,.0f} µs/fwd ({chain.share:.1%}); one kernel for both: "
                     f"--problem {chain.name}")
    if profile.problems:
        lines.append("problems written (cudalens test/time/optimize work on them):")
        lines += [f"  {p}" for p in profile.problems]
    return "\n".join(lines)
