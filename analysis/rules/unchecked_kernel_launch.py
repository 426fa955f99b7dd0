"""CL602: a `<<<...>>>` launch whose errors nothing in its host function ever looks at."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.file_context import FileContext, host_functions
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.rule_base import Rule

# Calls and macros that read the launch error (PyTorch's, the runtime's, cuda-samples' helper_cuda.h).
ERROR_CHECKS = {"cudaGetLastError", "cudaPeekAtLastError", "C10_CUDA_KERNEL_LAUNCH_CHECK", "getLastCudaError",
                "TORCH_CUDA_KERNEL_LAUNCH_CHECK"}
_IDENT = re.compile(r"[A-Za-z_]\w*")
_TORCH_HEADERS = ("torch/", "ATen/", "c10/")


def any_of(names: set[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")


def checking_names(unit: FileContext) -> set[str]:
    """The error checks, and the file's macros and host functions that (transitively) call one."""
    names = set(ERROR_CHECKS)
    bodies = {m.name: m.body for m in unit.unit.macros.values() if m.body}
    bodies |= {f.name: ts.text(f.body) for f in host_functions(unit.unit, own=False)}
    while True:
        pattern = any_of(names)
        found = {name for name, body in bodies.items() if name not in names and pattern.search(body)}
        if not found:
            return names
        names |= found


def _last_match_byte(pattern: re.Pattern[str], source: bytes, start: int, end: int) -> int:
    """The byte offset where the last match in `source[start:end]` begins, or -1. A launch is checked when a
    match begins after it: one search per host function, where one per launch made a host function with n
    launches cost n²."""
    text = source[start:end].decode("utf-8", "surrogatepass")  # how the analyzer encoded it
    last = None
    for last in pattern.finditer(text):  # noqa: B007 - the loop keeps the last match
        pass
    return -1 if last is None else start + len(text[:last.start()].encode("utf-8", "surrogatepass"))


class UncheckedKernelLaunch(Rule):
    """## What it does
    Flags a `kernel<<<...>>>(...)` launch in a host function that is not followed, in that function, by an
    error check: `cudaGetLastError()`, `cudaPeekAtLastError()`, `C10_CUDA_KERNEL_LAUNCH_CHECK()`, or a macro
    or function of the file that calls one of them (`CUDA_CHECK(cudaGetLastError())`, `checkLaunch()`).

    ## Why is this bad?
    A launch returns nothing. When it fails — too many threads per block, too much shared memory, a kernel
    built for another architecture — the kernel simply does not run, and the program continues with the output
    buffer as it was. In a PyTorch extension that means a tensor of garbage or zeros and a test failure far from
    its cause, or a silently wrong model.

    ## Known problems
    A `hint`: shown only where the minimum severity is `hint` (`cudalens check --min-severity hint`, or
    `min-severity = "hint"` under `[tool.cudalens]`), because most example and benchmark code never checks launches and a list of them
    would drown the findings that matter. The caller may check after this function returns, or a later
    synchronising call's status may be checked (that catches faults inside the kernel, but not a launch that
    never started). Only checks later in the same function are seen; one finding per host function.

    ## Example
    ```cuda
    torch::Tensor relu(torch::Tensor x) {
        auto y = torch::empty_like(x);
        relu_kernel<<<blocks, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
        return y;
    }
    ```

    ## Use instead
    ```cuda
    torch::Tensor relu(torch::Tensor x) {
        auto y = torch::empty_like(x);
        relu_kernel<<<blocks, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
        C10_CUDA_KERNEL_LAUNCH_CHECK();       // or: CUDA_CHECK(cudaGetLastError());
        return y;
    }
    ```

    ## Fix safety
    No automatic fix: the check to use (an exception, an error code, an abort) is the program's convention.

    ## References
    - CUDA C++ Programming Guide, "Error Checking"
    - PyTorch, `c10/cuda/CUDAException.h` (`C10_CUDA_KERNEL_LAUNCH_CHECK`)
    """

    code = "CL602"
    name = "unchecked-kernel-launch"
    summary = "Kernel launch not followed by an error check in its host function"
    depends_on = NO_FACTS  # host code as written
    default_severity = Severity.HINT  # off unless min-severity is hint: true nearly everywhere, never a bug

    def check_unit(self, unit: FileContext) -> Iterator[Finding]:
        hosts = {(f.node.start_byte, f.node.end_byte): f.name for f in host_functions(unit.unit)}
        launches = [launch for launch in unit.unit.launches if launch.host_function is not None
                    and (launch.host_function.start_byte, launch.host_function.end_byte) in hosts]
        if not launches:
            return
        checks = any_of(checking_names(unit))
        torch = any(inc.startswith(_TORCH_HEADERS) for inc in unit.unit.includes)
        advice = "`C10_CUDA_KERNEL_LAUNCH_CHECK()`" if torch else "a check of `cudaGetLastError()`"
        unchecked: dict[tuple[int, int], list] = {}
        last_check: dict[tuple[int, int], int] = {}
        for launch in launches:
            function = launch.host_function
            assert function is not None
            key = (function.start_byte, function.end_byte)
            if key not in last_check:
                last_check[key] = _last_match_byte(checks, unit.unit.source, *key)
            if last_check[key] < launch.node.end_byte:
                unchecked.setdefault(key, []).append(launch)
        # One finding per host function, at its first unchecked launch: a dispatch `switch` over 40
        # instantiations is one missing check, not 40.
        for key, group in unchecked.items():
            first = group[0]
            more = f" ({len(group) - 1} more launch{'es' if len(group) > 2 else ''} below, unchecked too)" \
                if len(group) > 1 else ""
            yield unit.finding(
                type(self), first.node.child_by_field_name("function") or first.node,
                f"Launch of `{first.kernel}` is never checked in `{hosts[key]}`{more}: a failed launch (bad "
                f"configuration, too much shared memory) leaves the output untouched without a word; add {advice} "
                "after it", kernel=first.kernel, evidence={"unchecked_launches": len(group)})
