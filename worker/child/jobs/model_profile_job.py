"""`cudalens model FILE`: run a whole model under torch.profiler and rank the torch calls it makes by time.

Each call the model makes (see op_calls.py) runs inside a profiler range named after its signature, so every
ATen op and CUDA kernel beneath it is charged to it: on a GPU its kernels' device time, on a CPU its ops' CPU
time. Warm-up forwards first (lazy initialisation, cuDNN's algorithm search), then `iters` profiled ones; the
figures are per forward. The `problems` best candidates (op_advice.py's order, then time) get a KernelBench
problem file each in `out_dir` (problem_render.py), with the model's own weights.

A **chain** is a call whose output's only reader, in a forward traced after the profiled ones, is one
elementwise call (op_calls.ELEMENTWISE: `group_norm` → `silu`): no other call read it, not even a view, and it
did not outlive the forward (returned, kept). Its problem (`--problem group_norm+silu`) is the pair: the two
calls in order, one kernel for both, swapped in where a graph shows the same pair (op_calls.graph_pass).

Payload: path, entry, device, warmup, iters, out_dir, problems, names (functions whose calls get a problem
whatever their rank; `producer+consumer` for a chain). Result: rows (every signature, by time), chains (by
time), problems (the files written), forward_ms (an unprofiled forward's median wall time), device, clock.
"""

from __future__ import annotations

import statistics
import time
import weakref
from pathlib import Path
from typing import Any

from ..lib import model_entry as entry
from ..lib import op_advice as advice
from ..lib import op_calls as calls
from ..lib import problem_render as render

RANGE = "cudalens.call#"
RECORD_LIMIT_BYTES = 1 << 30  # a call given more than this gets no recorded inputs (its problem keeps the random ones)


def run(payload: dict, ctx: Any = None) -> dict:
    import torch

    try:
        built, device = entry.from_payload(payload)
    except entry.EntryError as exc:
        return {"error": str(exc)}
    if ctx is not None:
        ctx.progress(f"built the model ({built.how}); warming up", 0.1)
    with torch.no_grad():
        walls = []
        for _ in range(max(1, int(payload.get("warmup", 2))) + 3):
            start = time.perf_counter()
            built()
            entry.sync(device)
            walls.append((time.perf_counter() - start) * 1000)
        if ctx is not None:
            ctx.progress("profiling", 0.4)
        iters = max(1, int(payload.get("iters", 5)))
        recorder = Recorder(calls, built.model)
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device.startswith("cuda"):
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        # the profiler's first step pays for its own start-up: a step of warm-up, not counted
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=iters)
        with torch.profiler.profile(activities=activities, schedule=schedule, acc_events=True) as prof, recorder.watching():
            for _ in range(iters + 1):
                with recorder:
                    built()
                entry.sync(device)
                prof.step()
    clock = "device" if device.startswith("cuda") else "cpu"
    rows = recorder.rows(prof.events(), iters, clock, device, advice)
    with torch.no_grad():  # one more forward, unprofiled, that follows each output to what reads it
        recorder.tracing = True
        with recorder:
            output = built()
        chains = recorder.chains(rows)
        recorder.tracing = False
        del output
    out: dict[str, Any] = {"device": device, "clock": clock, "forward_ms": statistics.median(walls[-3:]),
                           "how": built.how, "rows": rows, "chains": chains, "problems": []}
    folder = payload.get("out_dir")
    if folder:
        named = [r for r in (*rows, *chains) if r["writable"] and r["name"] in payload.get("names", ())]
        best = sorted((r for r in rows if r["writable"] and r["advice"] != "no" and r not in named),
                      key=lambda r: (advice.RANK[r["advice"]], -r["us"]))
        chosen = named + best[: int(payload.get("problems", 3))]
        source = Path(payload["path"]).name
        if chosen:  # one more forward, unprofiled, that keeps what the chosen calls were given
            recorder.recording = {i for row in chosen for i in row.get("pair", (row["id"],))}
            with torch.no_grad(), recorder:
                built()
        for row in chosen:
            path = render.write(row, Path(folder), source, recorder.saved(row, render), recorder.inputs(row))
            out["problems"].append({"id": row["id"], "path": str(path)})
    return out


class Recorder:
    """The TorchFunctionMode that names each call's profiler range after its signature, and remembers, per
    signature, the first call's arguments (the model's own tensors among them), the module that made it and
    what it returned."""

    def __init__(self, calls: Any, model: Any) -> None:
        from torch.overrides import TorchFunctionMode

        self.calls = calls
        self.ids: dict[tuple, int] = {}
        self.first: list[dict] = []
        self.module_names = {id(m): name or type(m).__name__ for name, m in model.named_modules()}
        self.own = {id(t) for t in [*model.parameters(), *model.buffers()]}
        self.stack: list[str] = []
        self._names: dict[Any, Any] = {}
        # the signatures whose first call's tensor arguments to keep (a problem's recorded inputs), and those kept
        self.recording: set[int] = set()
        self.recorded: dict[int, list[Any]] = {}
        # while `tracing`: each call's output (by call number: a weak reference, its signature) and who read it
        self.tracing = False
        self.outputs: dict[int, tuple[Any, int]] = {}
        self.by_id: dict[int, int] = {}
        self.readers: dict[int, list[tuple[int, str]]] = {}
        recorder = self

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
                return recorder.call(func, args, kwargs or {})

        self.mode = Mode()

    def __enter__(self) -> Recorder:
        self.mode.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.mode.__exit__(*exc)

    def watching(self) -> Any:
        """Module hooks that keep `stack` the path of the module running now (for the table's module column)."""
        import contextlib

        from torch.nn.modules import module as nn_module

        stack = contextlib.ExitStack()

        def pre(module: Any, _args: Any) -> None:
            self.stack.append(self.module_names.get(id(module), type(module).__name__))

        def post(module: Any, _args: Any, _out: Any) -> None:
            if self.stack:
                self.stack.pop()

        stack.callback(nn_module.register_module_forward_pre_hook(pre).remove)
        stack.callback(nn_module.register_module_forward_hook(post).remove)
        return stack

    def call(self, func: Any, args: tuple, kwargs: dict) -> Any:
        import torch

        if func not in self._names:
            path = self.calls.function_path(func)
            self._names[func] = (path, self.calls.parameter_names(func) if path else None)
        path, names = self._names[func]
        if path is None:
            return func(*args, **kwargs)
        bound = self.calls.bind(names, args, kwargs)
        key = self.calls.signature(path, bound)
        index = self.ids.get(key)
        if index is None:
            index = self.ids[key] = len(self.first)
            self.first.append({
                "path": path, "name": self.calls.function_name(func), "positional": len(args),
                "arguments": [[name, self.calls.describe(v)] for name, v in bound],
                "module": self.stack[-1] if self.stack else "", "kept": self._kept(bound), "output": None,
            })
        if index in self.recording and index not in self.recorded:
            tensors = self.calls.tensors_of(bound)
            if sum(t.numel() * t.element_size() for t in tensors) <= RECORD_LIMIT_BYTES:
                self.recorded[index] = [t.detach().clone() for t in tensors]  # before an in-place call changes them
        if self.tracing:
            number = len(self.outputs)
            for name, value in bound:
                for t in value if isinstance(value, (list, tuple)) else (value,):
                    made = self.by_id.get(id(t)) if isinstance(t, torch.Tensor) else None
                    if made is not None and self.outputs[made][0]() is t:
                        self.readers.setdefault(made, []).append((index, name))
        with torch.profiler.record_function(f"{RANGE}{index}"):
            result = func(*args, **kwargs)
        first = self.first[index]
        if first["output"] is None:
            first["output"] = self.calls.describe(result)
        if self.tracing:
            self.outputs[number] = (weakref.ref(result) if isinstance(result, torch.Tensor) else lambda: None, index)
            if isinstance(result, torch.Tensor):
                self.by_id[id(result)] = number
        return result

    def chains(self, rows: list[dict]) -> list[dict]:
        """After a traced forward (its output still held): each pair of signatures (producer, elementwise
        consumer) where a producer's output was read by exactly one call, once, and did not outlive the
        forward, as a problem row (the producer's, with `then`: the consumer's call and the argument that
        took the output), by time. Times are the two calls' per call, times the pair's calls a forward."""
        by_id = {r["id"]: r for r in rows}
        pairs: dict[tuple[int, int, str], int] = {}
        for number, (ref, producer) in self.outputs.items():
            read = self.readers.get(number, [])
            if ref() is None and len(read) == 1:
                key = (producer, *read[0])
                pairs[key] = pairs.get(key, 0) + 1
        out = []
        for (producer, consumer, slot), n in pairs.items():
            p, c = by_id.get(producer), by_id.get(consumer)
            if p is None or c is None or _writes(p) or _writes(c) or not self._elementwise(c, slot):
                continue
            us = (p["us"] / p["calls"] + c["us"] / c["calls"]) * n
            share = (p["share"] / p["calls"] + c["share"] / c["calls"]) * n
            out.append({**p, "id": f"{producer}+{consumer}", "pair": (producer, consumer), "name": f"{p['name']}+{c['name']}",
                        "calls": n, "us": us, "share": share, "output": c["output"], "writable": p["writable"] and c["writable"],
                        "then": {"function": c["function"], "positional": c["positional"], "arguments": c["arguments"],
                                 "input": slot}})
        return sorted(out, key=lambda r: -r["us"])

    def _elementwise(self, consumer: dict, slot: str) -> bool:
        """An out-of-place elementwise call whose tensors, the producer's output among them, all have one shape."""
        if consumer["function"] not in self.calls.ELEMENTWISE:
            return False
        metas, wanted = [], None
        for name, want in consumer["arguments"]:
            if "tensors" in want:
                return False
            if "tensor" in want:
                metas.append(want["tensor"])
                wanted = want["tensor"] if name == slot else wanted
        single = "tensor" in (consumer["output"] or {})
        return single and wanted is not None and all(m["shape"] == wanted["shape"] for m in metas)

    def _kept(self, bound: list) -> list[Any]:
        """Per tensor argument, the tensor itself when a problem must use its values (the model's parameters
        and buffers; integer and boolean tensors such as indices and masks), else None (random is fine)."""
        return [t if id(t) in self.own or not (t.is_floating_point() or t.is_complex()) else None
                for t in self.calls.tensors_of(bound)]

    def saved(self, row: dict, render: Any) -> dict[str, Any]:
        """The problem's kept tensors by input name: the call's (a chain's: then the consumer's but the output)."""
        names = render.input_names(render.input_arguments(row))
        kept = self._chained(row, lambda index: self.first[index]["kept"])
        return {name: t for name, t in zip(names, kept, strict=True) if t is not None}

    def inputs(self, row: dict) -> list[Any] | None:
        """The recorded tensors of the problem's inputs (None: not recorded). A chain's: its producer's first
        call's, then its consumer's first call's but the producer's output."""
        if any(i not in self.recorded for i in row.get("pair", (row["id"],))):
            return None
        return self._chained(row, lambda index: self.recorded[index])

    def _chained(self, row: dict, per_call: Any) -> list[Any]:
        if "then" not in row:
            return list(per_call(row["id"]))
        producer, consumer = row["pair"]
        then = row["then"]
        slot = self.calls.tensor_count([a for a in then["arguments"][: [n for n, _ in then["arguments"]].index(then["input"])]])
        theirs = list(per_call(consumer))
        return [*per_call(producer), *theirs[:slot], *theirs[slot + 1:]]

    def rows(self, events: Any, iters: int, clock: str, device: str, advice: Any) -> list[dict]:
        from torch.autograd import DeviceType

        totals: dict[int, dict] = {}
        for event in events:
            # with CUDA activity each range is also a user annotation on the GPU's timeline: the H200's tables
            # said 2 calls a forward for ResNet-50's conv1; the CPU range alone counts (its kernels are inside it)
            if not event.name.startswith(RANGE) or event.device_type != DeviceType.CPU:
                continue
            index = int(event.name[len(RANGE):])
            t = totals.setdefault(index, {"count": 0, "cpu_us": 0.0, "device_us": 0.0, "kernels": {}, "aten": {}})
            t["count"] += 1
            t["cpu_us"] += event.cpu_time_total - event.self_cpu_time_total  # the ops inside, not the range
            for child in event.cpu_children:
                t["aten"][child.name] = t["aten"].get(child.name, 0) + 1
            for kernel_name, us in _kernels(event):
                k = t["kernels"].setdefault(kernel_name, [0, 0.0])
                k[0] += 1
                k[1] += us
                t["device_us"] += us
        measure = "device_us" if clock == "device" else "cpu_us"
        grand = sum(t[measure] for t in totals.values()) or 1.0
        out = []
        for index, t in totals.items():
            first = self.first[index]
            share = t[measure] / grand
            kernels = sorted(t["kernels"].items(), key=lambda kv: -kv[1][1])
            verdict, why = advice.advice(first["name"], share, [k for k, _ in kernels])
            opaque = [n for n, want in first["arguments"] if "opaque" in want]
            single = "tensor" in (first["output"] or {})
            out.append({
                "id": index, "function": first["path"], "name": first["name"], "module": first["module"],
                "calls": t["count"] / iters, "us": t[measure] / iters, "cpu_us": t["cpu_us"] / iters,
                "device_us": t["device_us"] / iters, "share": share, "positional": first["positional"],
                "arguments": first["arguments"], "output": first["output"],
                "aten": sorted(t["aten"], key=lambda n: -t["aten"][n]),
                "kernels": [{"name": k, "calls": n / iters, "us": us / iters} for k, (n, us) in kernels[:5]],
                "advice": verdict, "why": why, "clock": clock, "device": device,
                "writable": not opaque and single,
            })
        return sorted(out, key=lambda r: -r["us"])


def _writes(row: dict) -> bool:
    """Whether a call writes into a tensor it was given (`add_`, `inplace=True`, `out=`): a pair with it would
    leave that tensor unwritten."""
    name = row["name"]
    given = dict(row["arguments"])
    return ((name.endswith("_") and not name.endswith("__")) or "out" in given
            or given.get("inplace", {}).get("value") not in (False, None))


def _kernels(event: Any) -> list[tuple[str, float]]:
    """(name, µs) of every device kernel launched inside `event`, its descendants' included."""
    out = [(k.name, float(k.duration)) for k in event.kernels]
    for child in event.cpu_children:
        out += _kernels(child)
    return out
