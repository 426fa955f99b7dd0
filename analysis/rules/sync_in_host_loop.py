"""CL601: a synchronising CUDA call (blocking copy, device/stream synchronize) inside a host loop."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.file_context import FileContext, host_functions
from cudalens.analysis.findings import Finding
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.syntax import enclosing_loop, find

BLOCKING_COPIES = {"cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol"}
# Not cudaEventSynchronize: waiting on one event per repetition is how timing loops measure.
SYNCHRONIZES = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaThreadSynchronize",
                "synchronize", "device_synchronize", "stream_synchronize"}
_QUALIFIED_ONLY = {"synchronize", "device_synchronize", "stream_synchronize"}  # torch::cuda::synchronize...


_TIMER = re.compile(r"\bsdk(?:Start|Stop|Reset)Timer\b|\bcudaEvent(?:Record|ElapsedTime)\b|\bchrono::|\bclock\s*\("
                    r"|\bgettimeofday\b|\bclock_gettime\b|\bomp_get_wtime\b|\bQueryPerformanceCounter\b"
                    r"|\btimer\w*\s*\.\s*(?:start|stop)\b")
# work the GPU runs (not stream-ordered allocation or attachment, which queue nothing to wait for)
_GPU_WORK = re.compile(r"<<<|\bcudaMem(?:cpy|set)\w*Async\s*\(|\bcudaGraphLaunch\s*\(|\bcudaLaunch\w*\s*\("
                       r"|\bcu(?:blas|fft|sparse|dnn|rand|solver)\w+\s*\(")
_ASYNC_TO_HOST = re.compile(r"\bcudaMemcpy\w*Async\s*\(\s*(?:\([^()]*\)\s*)?&?\s*([A-Za-z_][\w.>\-]*)[^;]*?(?:ToHost|Default)")
_BLOCKING_TO_HOST = re.compile(r"\bcudaMemcpy(?:2D|3D)?\s*\([^;]*?(?:ToHost|Default)")
_GPU_ARGS = re.compile(r"<<<[^;]*?>>>\s*\(([^;]*)\)|\b\w+Async\s*\(([^;]*)\)")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_NOT_NAMES = {"void", "float", "double", "int", "char", "unsigned", "const", "sizeof", "static_cast",
              "reinterpret_cast", "size_t", "uint8_t", "half"}


def _text(source: bytes, start: int, end: int) -> str:
    return source[start:end].decode("utf-8", errors="replace")


def _names_of(call, position: int) -> set[str]:
    """The names in a copy's destination (0) or source (1) argument (`h_out`, `&sum`, `(void*)h_buf + k`)."""
    args = call.child_by_field_name("arguments")
    nodes = args.named_children if args is not None else []
    return set(_NAME.findall(ts.text(nodes[position]))) - _NOT_NAMES if len(nodes) > position else set()


def _launching_functions(unit) -> set[str]:
    """Host functions of the unit that launch kernels (a call to one queues GPU work)."""
    names = set()
    for launch in unit.launches:
        declarator = launch.host_function.child_by_field_name("declarator") if launch.host_function else None
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        name = declarator.child_by_field_name("declarator") if declarator is not None else None
        if name is not None:
            names.add(ts.text(name).split("::")[-1])
    return names


def _gpu_buffers(function) -> set[str]:
    """What the host can read of the GPU's work: the destinations of the function's asynchronous copies to
    the host (`cudaMemcpyAsync(&sum, d_sum, ..., cudaMemcpyDeviceToHost, s)`, also inside a captured graph)."""
    return set(_ASYNC_TO_HOST.findall(ts.text(function.body)))


def _pointers(function) -> set[str]:
    """Names a host function declares as pointers (parameters and locals): the buffers it can hand the GPU."""
    names = {p.name for p in function.params if p.pointer}
    names |= set(re.findall(r"\*\s*([A-Za-z_]\w*)\s*(?:=|;|,|\)|\[)", ts.text(function.body)))
    return names


def _handed_over(before: str, pointers: set[str]) -> set[str]:
    """The buffers the iteration gave the GPU before the wait: pointer arguments of its launches and async
    calls, and members (`t.data`) that may hold one."""
    out = set()
    for m in _GPU_ARGS.finditer(before):
        for arg in (m.group(1) or m.group(2) or "").split(","):
            arg = re.sub(r"^\s*(?:\([^()]*\)|[&*\s])*", "", arg).strip()
            if arg in pointers or re.fullmatch(r"[A-Za-z_]\w*(?:(?:\.|->)\w+)+", arg):
                out.add(arg)
    return out


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def avoidable_stall(call, name: str, loop, source: bytes, launchers: set[str], pointers: set[str],
                    host_buffers: set[str]) -> str | None:
    """Why the wait is a per-iteration stall that could be avoided, or None where the loop needs it: the loop
    is timed (the sync brackets the measurement), the iteration queues no GPU work to wait for (a loop over
    devices or buffers), or the host uses what it waited for (the copied data, or a buffer the GPU was
    given) later in the iteration or in the loop's condition."""
    body = loop.child_by_field_name("body")
    if body is None:
        return None
    whole = _STRING.sub('""', _text(source, body.start_byte, body.end_byte))
    before = _STRING.sub('""', _text(source, body.start_byte, call.start_byte))
    after = _STRING.sub('""', _text(source, call.end_byte, body.end_byte))
    condition = loop.child_by_field_name("condition")
    after += " " + (ts.text(condition) if condition is not None else "")
    if _TIMER.search(whole):
        return None
    queued = _GPU_WORK.search(before + after) or not launchers.isdisjoint(_CALLED.findall(whole))
    if not queued:
        return None
    if _BLOCKING_TO_HOST.search(after):
        return None  # a blocking copy back follows in the iteration: the host waits there anyway
    if name.split("::")[-1] in BLOCKING_COPIES:
        args = ts.text(call.child_by_field_name("arguments"))
        if "ToHost" in args or "Default" in args or "FromSymbol" in name:
            if not _names_of(call, 0).isdisjoint(_NAME.findall(after)):
                return None
        elif "HostTo" in args and not _names_of(call, 1).isdisjoint(_NAME.findall(before)):
            return None  # the input the host just prepared for this iteration's step
        return "the host does not use the copied data in the loop"
    given = _handed_over(before, pointers) | host_buffers
    later_host = [line for line in after.split(";") if not _GPU_WORK.search(line) and "cuda" not in line]
    if any(re.search(rf"\b{re.escape(n)}\b", line) for n in given for line in later_host):
        return None
    return "nothing the host does next in the loop reads what the GPU produced"


def blocking_call(call) -> str | None:
    func = call.child_by_field_name("function")
    if func is None or func.type not in ("identifier", "qualified_identifier"):
        return None
    full = ts.text(func)
    name = full.split("::")[-1]
    if name in _QUALIFIED_ONLY and "cuda" not in full:
        return None
    if name in BLOCKING_COPIES:
        args = call.child_by_field_name("arguments")
        if args is not None and "DeviceToDevice" in ts.text(args):
            return None  # device-to-device copies do not wait for the host
        return full
    return full if name in SYNCHRONIZES else None


class SyncInHostLoop(Rule):
    """## What it does
    Flags a call that makes the host wait for the GPU — `cudaMemcpy` (not `cudaMemcpyAsync`),
    `cudaDeviceSynchronize`, `cudaStreamSynchronize`, `torch::cuda::synchronize` —
    inside a host `for`/`while`/`do` loop.

    ## Why is this bad?
    Each wait drains the GPU's queue: the host cannot enqueue the next iteration's work until the previous
    one has finished, so the GPU idles for the launch latency (several microseconds) every iteration and
    copies never overlap with computation. For short kernels the loop runs at the speed of the round trips,
    not of the GPU.

    ## Known problems
    Only waits that the loop does not need are reported. Not reported: a copy whose data the host reads later
    in the iteration or in the loop's condition (a convergence test, a result check), a sync after which the
    host reads a buffer the iteration gave the GPU, a wait or copy followed in the iteration by a blocking copy
    back to the host (the host waits there every iteration anyway: kaolin's ray tracer copies a level's count
    back to size the next level, so its earlier `cudaMemcpy` to the device stalls nothing more), waits in a
    loop that queues no GPU work (a loop over devices or setup buffers), and waits in a timed loop (timers or events in the body: the sync brackets
    the measurement). Whether a later host read needs the data is judged by names, so a read through an alias
    is missed. Device-to-device `cudaMemcpy` is not reported (it does not block the host), nor is
    `cudaEventSynchronize` (timing loops wait on one event per repetition by design).

    ## Example
    ```cuda
    for (int step = 0; step < steps; ++step) {
        update<<<grid, block>>>(d_state, n);
        cudaDeviceSynchronize();
        cudaMemcpy(h_state, d_state, bytes, cudaMemcpyDeviceToHost);
    }
    ```

    ## Use instead
    ```cuda
    for (int step = 0; step < steps; ++step) {
        update<<<grid, block, 0, stream>>>(d_state, n);
    }
    cudaMemcpyAsync(h_state, d_state, bytes, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    ```

    ## Fix safety
    No automatic fix: whether the loop needs the data each iteration is the program's logic.

    ## References
    - CUDA C++ Best Practices Guide, "Asynchronous and Overlapping Transfers with Computation"
    - CUDA Runtime API, "API synchronization behavior"
    """

    code = "CL601"
    name = "sync-in-host-loop"
    summary = "Blocking copy or synchronize inside a host loop"
    depends_on = NO_FACTS  # host code as written

    def check_unit(self, unit: FileContext) -> Iterator[Finding]:
        launchers = _launching_functions(unit.unit)
        for function in host_functions(unit.unit):
            pointers: set[str] | None = None
            host_buffers: set[str] = set()
            for call in find(function.body, "blocking", "host_calls"):
                name = blocking_call(call)
                if name is None:
                    continue
                loop = enclosing_loop(call, function.body)
                if loop is None:
                    continue
                if pointers is None:
                    pointers, host_buffers = _pointers(function), _gpu_buffers(function)
                why = avoidable_stall(call, name, loop, unit.unit.source, launchers, pointers, host_buffers)
                if why is None:
                    continue
                what = "copies synchronously" if name.split("::")[-1] in BLOCKING_COPIES else "waits for the GPU"
                yield unit.finding(
                    type(self), call.child_by_field_name("function"),
                    f"`{name}` inside a loop {what} every iteration, and {why}: the GPU idles between "
                    "iterations and nothing overlaps; queue the work on a stream (`cudaMemcpyAsync`) and "
                    "synchronize once after the loop",
                    related=((loop, "the loop"),),
                    evidence={"call": name})
