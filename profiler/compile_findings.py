"""Compiler results as findings, for `cudalens check --compile` and the server's on-save compile (no GPU needed).

CL801 compile errors and CL802 warnings at the line nvcc names (in the `.cu`, the header, or the `.py` that embeds
the source); CL803 register spills and CL804 low theoretical occupancy on the kernel's name, from ptxas's
resource usage and, for CL804, the block size the analyzer found at the kernel's launch sites.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from cudalens.analysis.api import KernelInfo, analyze_text
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.file_kinds import is_cuda_source
from cudalens.analysis.findings import Finding, Severity, Span
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.rules.compile_error import CompileError
from cudalens.analysis.rules.compile_warning import CompileWarning
from cudalens.analysis.rules.low_theoretical_occupancy import LowTheoreticalOccupancy
from cudalens.analysis.rules.register_spills import RegisterSpills
from cudalens.profiler import processes
from cudalens.profiler.compile import CompileOptions, CompileResult, KernelSite, compile_cuda, compile_python
from cudalens.profiler.nvcc_diagnostics import CompilerMessage
from cudalens.profiler.occupancy import Occupancy, theoretical_occupancy
from cudalens.profiler.processes import CancelToken
from cudalens.profiler.ptxas import KernelResources
from cudalens.workspace.includes import DiskIncludes

LOW_OCCUPANCY = 0.5
RESOURCE_LIMITERS = ("registers", "shared_memory", "barriers")


@dataclass(frozen=True)
class LaunchShape:
    """What the analyzer knows about how a kernel is launched."""

    block_threads: int
    dynamic_shared_bytes: int | None  # None: unknown (counted as 0, and the message says so)


@dataclass
class CompileReport:
    findings: list[Finding] = field(default_factory=list)
    results: list[CompileResult] = field(default_factory=list)
    skipped: str | None = None  # why nothing was compiled (no nvcc, torch headers missing), to show once


def _message_finding(path: str, msg: CompilerMessage) -> Finding:
    error = msg.severity == "error"
    text = msg.message + (f" [#{msg.code}]" if msg.code else "")
    return Finding(
        path=msg.path or path,
        code=(CompileError if error else CompileWarning).code,
        rule=(CompileError if error else CompileWarning).name,
        severity=Severity.ERROR if error else Severity.WARNING,
        message=text if msg.tool != "nvcc" or text.startswith("nvcc") else f"nvcc: {text}",
        span=Span(msg.line, msg.column, msg.line, max(msg.end_column, msg.column)),
    )


def _kernel_span(site: KernelSite | None) -> Span:
    return Span(site.line, site.column, site.line, site.end_column) if site else Span(1, 1, 1, 1)


def _kernel_finding(
    path: str, rule: type[Rule], message: str, k: KernelResources, site: KernelSite | None, evidence: tuple
) -> Finding:
    return Finding(
        path=path,
        code=rule.code,
        rule=rule.name,
        severity=Severity.WARNING,
        message=message,
        span=_kernel_span(site),
        kernel=k.short_name,
        evidence=(*evidence, ("arch", k.arch)),
    )


def _spill_finding(path: str, k: KernelResources, site: KernelSite | None) -> Finding:
    message = (
        f"`{k.display_name}` spills registers to local memory on {k.arch}: {k.spill_stores_bytes} bytes stored and "
        f"{k.spill_loads_bytes} bytes loaded per thread ({k.registers} registers, {k.stack_frame_bytes} bytes "
        f"of stack)"
    )
    evidence = (
        ("registers", k.registers),
        ("spill_stores_bytes", k.spill_stores_bytes),
        ("spill_loads_bytes", k.spill_loads_bytes),
        ("stack_frame_bytes", k.stack_frame_bytes),
    )
    return _kernel_finding(path, RegisterSpills, message, k, site, evidence)


def _registers_for(k: KernelResources, shape: LaunchShape, target: float) -> int | None:
    """The most registers per thread that would reach `target` occupancy, all else equal."""
    for regs in range(k.registers - 1, 0, -1):
        occ = theoretical_occupancy(
            k.arch, shape.block_threads, regs, k.shared_static_bytes, shape.dynamic_shared_bytes or 0, k.barriers
        )
        if occ.fraction >= target:
            return regs
    return None


def occupancy_for(k: KernelResources, shape: LaunchShape) -> Occupancy | None:
    try:
        return theoretical_occupancy(
            k.arch, shape.block_threads, k.registers, k.shared_static_bytes, shape.dynamic_shared_bytes or 0,
            k.barriers,
        )
    except (KeyError, ValueError):
        return None


def _occupancy_finding(path: str, k: KernelResources, site: KernelSite | None, shape: LaunchShape) -> Finding | None:
    occ = occupancy_for(k, shape)
    if occ is None or occ.fraction >= LOW_OCCUPANCY or occ.limiter not in RESOURCE_LIMITERS:
        return None
    if occ.limiter == "registers":
        fewer = _registers_for(k, shape, LOW_OCCUPANCY)
        why = f"{k.registers} registers per thread" + (
            f"; at most {fewer} would allow {LOW_OCCUPANCY:.0%} (`__launch_bounds__` or `-maxrregcount`)" if fewer else ""
        )
    elif occ.limiter == "shared_memory":
        why = f"{occ.shared_per_block} bytes of shared memory per block (1 KB of it reserved by the driver)"
    else:
        why = f"{k.barriers} named barriers per block"
    unknown = " (dynamic shared memory unknown, counted as 0)" if shape.dynamic_shared_bytes is None else ""
    message = (
        f"`{k.display_name}` reaches {occ.fraction:.0%} theoretical occupancy on {k.arch} with "
        f"{shape.block_threads}-thread blocks ({occ.active_blocks} blocks, {occ.active_warps} of {occ.max_warps} "
        f"warps per SM), limited by {why}{unknown}"
    )
    evidence = (
        ("occupancy", round(occ.fraction, 4)),
        ("active_blocks", occ.active_blocks),
        ("active_warps", occ.active_warps),
        ("max_warps", occ.max_warps),
        ("limiter", occ.limiter),
        ("registers", k.registers),
        ("shared_per_block_bytes", occ.shared_per_block),
        ("block_threads", shape.block_threads),
    )
    return _kernel_finding(path, LowTheoreticalOccupancy, message, k, site, evidence)


def resources_summary(k: KernelResources, shape: LaunchShape | None = None) -> str:
    """One line for a hover or code lens: `72 regs · 1 KB smem · no spills · 38 % occupancy (registers) on sm_90`."""
    parts = [f"{k.registers} regs"]
    if k.shared_static_bytes:
        parts.append(f"{k.shared_static_bytes / 1024:.3g} KB smem")
    parts.append(f"spills {k.spill_stores_bytes}/{k.spill_loads_bytes} B" if k.spills else "no spills")
    occ = occupancy_for(k, shape) if shape else None
    if occ is not None:
        parts.append(f"{occ.fraction:.0%} occupancy at {shape.block_threads} threads ({occ.limiter})")
    return " · ".join(parts) + f" on {k.arch}"


def launch_shapes(
    path: str, text: str, config: AnalysisConfig, kernels: list[KernelInfo] | None = None
) -> dict[str, LaunchShape]:
    """Kernel name → block size (and dynamic shared memory) where the analyzer proved one constant shape.

    `kernels`: the analyzer's report for this text when the caller already has it (else it is run here).
    """
    if kernels is None:
        try:
            kernels = analyze_text(path, text, config).kernels
        except Exception:  # the analyzer is optional here: without it there is no CL804
            return {}
    shapes = {}
    for info in kernels:
        if info.block is None:
            continue
        threads = info.block[0] * info.block[1] * info.block[2]
        dynamic = {site.dynamic_shared_bytes for site in info.launch_sites}
        known = dynamic.pop() if len(dynamic) == 1 else None
        shapes[info.name] = LaunchShape(threads, known if known is not None else (None if info.uses_dynamic_shared else 0))
    return shapes


def findings_from_results(
    path: str, results: list[CompileResult], shapes: dict[str, LaunchShape], config: AnalysisConfig
) -> list[Finding]:
    found: list[Finding] = []
    for result in results:
        found += [_message_finding(path, m) for m in result.messages if m.severity in ("error", "warning")]
        for k in result.kernels:
            site = result.site_of(k)
            if k.spills:
                found.append(_spill_finding(path, k, site))
            shape = shapes.get(k.short_name)
            if shape is not None:
                occupancy = _occupancy_finding(path, k, site, shape)
                if occupancy:
                    found.append(occupancy)
    return [f for f in found if config.enabled(f.code)]


def compile_report(
    path: str,
    text: str,
    config: AnalysisConfig | None = None,
    options: CompileOptions | None = None,
    kernels: list[KernelInfo] | None = None,
    cancel: CancelToken | None = None,
    roots: tuple[str, ...] | None = None,
) -> CompileReport:
    """Compile one file and turn the results into findings; `processes.Cancelled` if `cancel` fires. `roots`: the
    folders nvcc may read headers from (default: the current folder and the file's): a file that includes one
    from elsewhere is not compiled, so that nothing of it reaches a message (CI checks untrusted pull requests)."""
    config = config or AnalysisConfig()
    options = options or CompileOptions(arch=config.arch, include_dirs=config.include_dirs)
    roots = roots if roots is not None else (str(Path.cwd()), str(Path(path).resolve().parent))
    if escaping := DiskIncludes(config.include_dirs, roots=roots).escapes(path, text):
        names = ", ".join(f'"{n}"' for n in escaping[:3])
        return CompileReport(skipped=f"{Path(path).name} includes {names} from outside the workspace and its include "
                                     "folders: not compiled")
    suffix = Path(path).suffix.lower()
    if is_cuda_source(path):
        results = [compile_cuda(path, text, options, cancel)]
    elif suffix == ".py":
        results = [part.result for part in compile_python(path, text, options, cancel).parts]
    else:
        return CompileReport()
    skipped = next((r.reason for r in results if r.status == "skipped"), None)
    shapes = launch_shapes(path, text, config, kernels)
    return CompileReport(findings_from_results(path, results, shapes, config), results, skipped)


async def compile_report_async(
    path: str,
    text: str,
    config: AnalysisConfig | None = None,
    options: CompileOptions | None = None,
    kernels: list[KernelInfo] | None = None,
    roots: tuple[str, ...] | None = None,
) -> CompileReport:
    """`compile_report` off the event loop; cancelling the task kills the running nvcc."""
    return await processes.in_thread(functools.partial(compile_report, path, text, config, options, kernels,
                                                       roots=roots))


def compile_findings(
    path: str, text: str, config: AnalysisConfig | None = None, kernels: list[KernelInfo] | None = None
) -> list[Finding]:
    """The CL801–CL804 findings of one `.cu`/`.cuh`/`.py` file (nothing for other files).

    Pass the analyzer's `AnalysisReport.kernels` for the same text as `kernels` when you have them; otherwise
    the analyzer runs here to find launch block sizes (for CL804).
    """
    return compile_report(path, text, config, kernels=kernels).findings
