"""Parsing, the kernel models and the rules over one document."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.api import AnalysisReport, KernelInfo, LaunchSite
from cudalens.analysis.codes import static_rules
from cudalens.analysis.embedded import extract_cuda_sources, may_contain_cuda
from cudalens.analysis.findings import Finding, Severity, sort_key
from cudalens.analysis.model import KernelModel, PositionMap, build_model
from cudalens.analysis.positions import LineIndex
from cudalens.analysis.unit import build_unit

if TYPE_CHECKING:
    from cudalens.analysis.api import DocumentAnalyzer

CUDA_SUFFIXES = (".cu", ".cuh")


def is_cuda_path(path: str) -> bool:
    return path.endswith(CUDA_SUFFIXES)


def run_pipeline(doc: DocumentAnalyzer, text: str) -> AnalysisReport:
    if is_cuda_path(doc.path):
        report = AnalysisReport(path=doc.path, is_cuda=True)
        analyze_cuda(doc, text, None, report)
    elif doc.path.endswith(".py") and may_contain_cuda(text):
        sources = [s for s in extract_cuda_sources(text) if s.kind == "cuda"]
        report = AnalysisReport(path=doc.path, is_cuda=bool(sources))
        for s in sources:
            report.embedded_sources.append((s.text, s.start_line))
            analyze_cuda(doc, s.text, s.to_file_position, report)
    else:
        return AnalysisReport(path=doc.path, is_cuda=False)
    config = doc.config
    min_rank = Severity(config.min_severity).rank
    report.findings = sorted(
        (f for f in report.findings if config.enabled(f.code) and f.severity.rank >= min_rank), key=sort_key)
    return report


def analyze_cuda(doc: DocumentAnalyzer, text: str, to_file: PositionMap | None, report: AnalysisReport) -> None:
    source = text.encode("utf-8", errors="surrogatepass")
    unit = build_unit(source)
    report.includes.extend(unit.includes)
    index = LineIndex(text)
    context = _context_key(unit)
    for kernel in unit.kernels:
        if kernel.body is None:
            continue
        key = (hashlib.blake2b(ts.text(kernel.node).encode() + context.encode(), digest_size=16).hexdigest(),
               kernel.node.start_point[0], to_file is None)
        cached = doc.kernel_cache.get(key)
        if cached is None:
            model = build_model(doc.path, unit, kernel, index, to_file)
            cached = (run_rules(model), kernel_info(model))
        doc.next_cache[key] = cached
        report.findings.extend(cached[0])
        report.kernels.append(cached[1])


def _context_key(unit) -> str:
    """What a kernel's analysis depends on outside its own text: macros, structs, helpers, launch sites."""
    parts = [repr(sorted((m.name, m.params, m.body) for m in unit.macros.values()))]
    parts += [ts.text(f.node) for fs in unit.functions.values() for f in fs if not f.is_kernel]
    parts += [ts.text(launch.node) for launch in unit.launches]
    parts += [repr(sorted(unit.types.structs))]
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=16).hexdigest()


def run_rules(model: KernelModel) -> list[Finding]:
    findings: list[Finding] = []
    for rule in static_rules():
        findings.extend(rule.check(model))
    return findings


def kernel_info(model: KernelModel) -> KernelInfo:
    block = model.block
    if block is None:
        warp_shape = "unknown block shape (assumed " + ", ".join(c.label for c in model.configs) + ")"
    elif block[0] >= 32:
        warp_shape = "32×1 lanes along threadIdx.x"
    else:
        warp_shape = f"{block[0]}×{max(1, 32 // block[0])} lanes (threadIdx.x × threadIdx.y)"
    shared = model.primary.shared_arrays
    static_bytes = sum(p.elem.size * _prod(p.dims) for p in shared.values() if p.dims)
    bounds = tuple(int(v) for v in (ts.text(n) for n in model.function.launch_bounds) if v.isdigit())
    return KernelInfo(
        name=model.name,
        span=model.span(model.function.node),
        name_span=model.span(_name_node(model)),
        block=block,
        launch_bounds=bounds or None,
        warp_shape=warp_shape,
        static_shared_bytes=static_bytes,
        uses_dynamic_shared=any(not p.dims for p in shared.values()),
        launch_sites=tuple(LaunchSite(model.span(n), g, b, s) for n, g, b, s in model.launch_sites),
        template=bool(model.function.template_params),
    )


def _name_node(model: KernelModel):
    declarator = model.function.node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    return name or model.function.node


def _prod(dims: tuple[int, ...]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out
