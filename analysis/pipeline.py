"""Parsing, the kernel models and the rules over one document."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.api import AnalysisReport, KernelInfo, oversized_report
from cudalens.analysis.codes import static_rules
from cudalens.analysis.embedded import extract_cuda_sources, may_contain_cuda
from cudalens.analysis.features import kernel_features
from cudalens.analysis.file_context import FileContext, PositionMap
from cudalens.analysis.findings import Finding, Severity, Span, sort_key
from cudalens.analysis.model import KernelModel, build_model
from cudalens.analysis.positions import LineIndex, parser_text
from cudalens.analysis.suppression import apply_suppressions
from cudalens.analysis.unit import build_unit, header_unit

if TYPE_CHECKING:
    from cudalens.analysis.api import DocumentAnalyzer

CUDA_SUFFIXES = (".cu", ".cuh")


def is_cuda_path(path: str) -> bool:
    return path.endswith(CUDA_SUFFIXES)


def run_pipeline(doc: DocumentAnalyzer, text: str) -> AnalysisReport:
    # Compilers read a NUL as white space; tree-sitter's lexer stops at one, so a NUL in a comment made the
    # rest of the line code that swallowed the next statement (and its findings). Same length: positions hold.
    text = text.replace("\0", " ")
    if not (is_cuda_path(doc.path) or (doc.path.endswith(".py") and may_contain_cuda(text))):
        return AnalysisReport(path=doc.path, is_cuda=False)
    too_large = oversized_report(doc.path, text)
    if too_large is not None:
        report = too_large
    elif is_cuda_path(doc.path):
        report = AnalysisReport(path=doc.path, is_cuda=True)
        analyze_cuda(doc, text, None, report)
    else:
        sources = [s for s in extract_cuda_sources(text) if s.kind == "cuda"]
        report = AnalysisReport(path=doc.path, is_cuda=bool(sources))
        for s in sources:
            report.embedded_sources.append((s.text, s.start_line, s.positions[-1][0]))
            analyze_cuda(doc, s.text, s.to_file_position, report)
    config = doc.config
    min_rank = Severity(config.min_severity).rank
    kept = [f for f in report.findings if config.enabled(f.code) and f.severity.rank >= min_rank]
    # every consumer (CLI, server, pre-commit) sees the document's own suppression comments honoured
    report.findings = sorted(apply_suppressions(text, kept, doc.path), key=sort_key)
    return report


def analyze_cuda(doc: DocumentAnalyzer, text: str, to_file: PositionMap | None, report: AnalysisReport) -> None:
    text = parser_text(text)  # tree-sitter's rows are then LSP lines (positions.py)
    source = text.encode("utf-8", errors="surrogatepass")
    unit = build_unit(source, doc.parse(source) if to_file is None else None)
    report.includes.extend(unit.includes)
    headers = _read_headers(doc, unit.includes)
    for header in headers:
        unit.include(header_unit(header))
    index = LineIndex(text)
    file_context = FileContext(doc.path, unit, index, to_file)
    context = (_context_key(unit, source) + hashlib.blake2b(b"\0".join(headers), digest_size=8).hexdigest()).encode()
    for kernel in unit.kernels:
        if kernel.body is None:
            continue
        start, end = kernel.node.start_point[0] + 1, kernel.node.end_point[0] + 1
        # Embedded sources map positions through their .py text: their results are reused only in place.
        key = (hashlib.blake2b(source[kernel.node.start_byte:kernel.node.end_byte] + context, digest_size=16).digest(),
               None if to_file is None else start)
        cached = _moved(doc.kernel_cache.get(key), start)
        if cached is None:
            try:
                model = build_model(doc.path, unit, kernel, index, to_file, file_context.kernel_launches(kernel.name))
                findings = run_rules(model)
                cached = CachedKernel(findings, kernel_info(model, findings), start, end)
            except Exception as exc:  # one kernel the analyzer cannot handle must not cost the others
                report.errors.append(f"{doc.path}:{start}: internal error analysing `{kernel.name}`: "
                                     f"{type(exc).__name__}: {exc}")
                continue
        # launch sites live in host code that moves independently of the kernel: always read them afresh
        sites = file_context.kernel_launches(kernel.name).sites
        if cached.info.launch_sites is not sites and cached.info.launch_sites != sites:
            cached = replace(cached, info=replace(cached.info, launch_sites=sites))
        doc.next_cache[key] = cached
        report.findings.extend(cached.findings)
        report.kernels.append(cached.info)
    report.findings.extend(_unit_findings(doc, source, unit, headers, file_context, report))


def _unit_findings(doc: DocumentAnalyzer, source: bytes, unit, headers: list[bytes], context: FileContext,
                   report: AnalysisReport) -> list[Finding]:
    """The file-level rules' findings. They read host code, helpers, launch sites and kernel signatures, never
    kernel bodies: while only a kernel body changes in place (typing inside a kernel), the last ones stand."""
    if context.to_file is not None:  # embedded CUDA: positions go through the .py text, which may have moved
        return run_unit_rules(context, report)
    digest = hashlib.blake2b(digest_size=16)
    last = 0
    for kernel in sorted((k for k in unit.kernels if k.body is not None), key=lambda k: k.body.start_byte):
        if kernel.body.start_byte < last:
            continue
        digest.update(source[last:kernel.body.start_byte])
        digest.update(repr((kernel.body.start_point, kernel.body.end_point)).encode())
        last = kernel.body.end_byte
    digest.update(source[last:])
    digest.update(b"\0".join(headers))
    key = digest.hexdigest()
    if doc.unit_cache is not None and doc.unit_cache[0] == key:
        return doc.unit_cache[1]
    errors_before = len(report.errors)
    findings = run_unit_rules(context, report)
    doc.unit_cache = (key, findings) if len(report.errors) == errors_before else None
    return findings


def _read_headers(doc: DocumentAnalyzer, includes: list[str]) -> list[bytes]:
    """The texts of the local headers a file includes (one level: enough for helpers and macros)."""
    if doc.read_include is None:
        return []
    out = []
    for name in includes:
        try:
            text = doc.read_include(name, doc.path)
        except OSError:
            text = None
        if text is not None:
            out.append(parser_text(text.replace("\0", " ")).encode("utf-8", errors="surrogatepass"))
    return out


@dataclass(frozen=True)
class CachedKernel:
    findings: list[Finding]
    info: KernelInfo
    start_line: int
    end_line: int


def _moved(cached: CachedKernel | None, start: int) -> CachedKernel | None:
    """A cached kernel's results moved to its new first line; None when they cannot simply be moved (a
    finding outside the kernel, e.g. in a helper it calls, may not have moved with it)."""
    if cached is None or cached.start_line == start:
        return cached
    delta = start - cached.start_line
    spans = [f.span for f in cached.findings] + [r.span for f in cached.findings for r in f.related]
    if any(not (cached.start_line <= s.line and s.end_line <= cached.end_line) for s in spans):
        return None
    findings = [replace(f, span=shift(f.span, delta),
                        related=tuple(replace(r, span=shift(r.span, delta)) for r in f.related),
                        fix=None if f.fix is None else replace(f.fix, edits=tuple(
                            replace(e, span=shift(e.span, delta)) for e in f.fix.edits)))
                for f in cached.findings]
    info = replace(cached.info, span=shift(cached.info.span, delta), name_span=shift(cached.info.name_span, delta))
    return CachedKernel(findings, info, start, cached.end_line + delta)


def shift(span: Span, delta: int) -> Span:
    return Span(span.line + delta, span.column, span.end_line + delta, span.end_column)


def _context_key(unit, source: bytes) -> str:
    """What a kernel's analysis depends on outside its own text: macros, structs, helpers, launch sites."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr(sorted((m.name, m.params, m.body) for m in unit.macros.values())).encode())
    for f in (f for fs in unit.functions.values() for f in fs if not f.is_kernel):
        # a header's helper has the header's byte offsets: its own text, not a slice of this source
        digest.update(b"\0" + ((f.node.text or b"") if f.from_header else source[f.node.start_byte:f.node.end_byte]))
    for launch in unit.launches:
        digest.update(b"\0" + source[launch.node.start_byte:launch.node.end_byte])
    digest.update(unit.types.key().encode())
    for name, node in sorted(unit.constants.items()):
        digest.update(f"\0{name}=".encode() + (node.text or b""))
    return digest.hexdigest()


def run_rules(model: KernelModel) -> list[Finding]:
    findings: list[Finding] = []
    for rule in static_rules():
        findings.extend(rule.check(model))
    return findings


def run_unit_rules(unit: FileContext, report: AnalysisReport) -> list[Finding]:
    findings: list[Finding] = []
    for rule in static_rules():
        try:
            findings.extend(rule.check_unit(unit))
        except Exception as exc:  # one rule the analyzer cannot run must not cost the others
            report.errors.append(f"{unit.path}: internal error in {rule.code}: {type(exc).__name__}: {exc}")
    return findings


def kernel_info(model: KernelModel, findings: list[Finding]) -> KernelInfo:
    block = model.block
    if block is None:
        warp_shape = "unknown block shape (assumed " + ", ".join(c.label for c in model.configs) + ")"
    elif block[0] >= 32:
        warp_shape = "32×1 lanes along threadIdx.x"
    else:
        warp_shape = f"{block[0]}×{max(1, 32 // block[0])} lanes (threadIdx.x × threadIdx.y)"
    shared = model.primary.shared_arrays
    features = kernel_features(model, findings)
    bounds = tuple(int(v) for v in (ts.text(n) for n in model.function.launch_bounds) if v.isdigit())
    return KernelInfo(
        name=model.name,
        span=model.span(model.function.node),
        name_span=model.span(_name_node(model)),
        block=block,
        launch_bounds=bounds or None,
        warp_shape=warp_shape,
        static_shared_bytes=features.static_shared_bytes,
        uses_dynamic_shared=any(not p.dims for p in shared.values()),
        template=bool(model.function.template_params),
        features=features,
    )


def _name_node(model: KernelModel):
    declarator = model.function.node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    return name or model.function.node


