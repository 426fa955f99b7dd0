"""CL601: a synchronising CUDA call (blocking copy, device/stream synchronize) inside a host loop."""

from __future__ import annotations

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
    Some loops need a result every iteration (a convergence test, a data-dependent size); then the copy is
    required, but it can often be made smaller, asynchronous into pinned memory, or done every k-th iteration.
    Loops in setup code that copy a few buffers once are reported too. Device-to-device `cudaMemcpy` is not
    reported (it does not block the host), nor is `cudaEventSynchronize` (timing loops wait on one event per
    repetition by design).

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
        for function in host_functions(unit.unit):
            for call in find(function.body, "blocking", "host_calls"):
                name = blocking_call(call)
                if name is None:
                    continue
                loop = enclosing_loop(call, function.body)
                if loop is None:
                    continue
                what = "copies synchronously" if name.split("::")[-1] in BLOCKING_COPIES else "waits for the GPU"
                yield unit.finding(
                    type(self), call.child_by_field_name("function"),
                    f"`{name}` inside a loop {what} every iteration: the GPU idles between iterations and "
                    "nothing overlaps; queue the work on a stream (`cudaMemcpyAsync`) and synchronize once after "
                    "the loop",
                    related=((loop, "the loop"),),
                    evidence={"call": name})
