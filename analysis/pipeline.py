"""Parsing, the kernel models and the rules over one document."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.codes import static_rules
from cudalens.analysis.embedded import extract_cuda_sources
from cudalens.analysis.features import kernel_features
from cudalens.analysis.file_context import FileContext, HeaderText, PositionMap
from cudalens.analysis.file_kinds import holds_cuda
from cudalens.analysis.findings import Finding, Severity, Span, sort_key
from cudalens.analysis.launch_configs import (
    KernelConfig,
    KernelLaunches,
    LaunchedAs,
    instantiations,
    kernel_configs,
    merge,
    own_records,
    with_launches,
)
from cudalens.analysis.launch_directive import DirectiveError, launch_directives
from cudalens.analysis.launch_index import MAX_INCLUDE_DEPTH, FileLaunches, header_identities
from cudalens.analysis.model import KernelModel, build_model
from cudalens.analysis.positions import LineIndex, parser_text
from cudalens.analysis.report import (
    MAX_ANALYSED_CHARS,
    AnalysisReport,
    IncludeReader,
    KernelInfo,
    oversized_report,
)
from cudalens.analysis.suppression import apply_suppressions
from cudalens.analysis.unit import Unit, build_unit, header_unit

if TYPE_CHECKING:
    from cudalens.analysis.api import DocumentAnalyzer

MAX_HEADER_BYTES = 4_000_000  # a file's headers together: past this, a generated header, not a kernel's macros


def run_pipeline(doc: DocumentAnalyzer, text: str) -> AnalysisReport:
    # Compilers read a NUL as white space; tree-sitter's lexer stops at one, so a NUL in a comment made the
    # rest of the line code that swallowed the next statement (and its findings). Same length: positions hold.
    text = text.replace("\0", " ")
    if not holds_cuda(doc.path, text):
        return AnalysisReport(path=doc.path, is_cuda=False)
    too_large = oversized_report(doc.path, text)
    if too_large is not None:
        report = too_large
    elif not doc.path.lower().endswith(".py"):  # a .cu/.cuh, or a header that holds device code
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
    enabled: dict[str, bool] = {}  # by code: a few codes, a thousand findings
    kept = [f for f in report.findings if f.severity.rank >= min_rank
            and (enabled[f.code] if f.code in enabled else enabled.setdefault(f.code, config.enabled(f.code)))]
    # every consumer (CLI, server, pre-commit) sees the document's own suppression comments honoured
    report.findings = sorted(apply_suppressions(text, kept, doc.path), key=sort_key)
    return report


def analyze_cuda(doc: DocumentAnalyzer, text: str, to_file: PositionMap | None, report: AnalysisReport) -> None:
    text = parser_text(text)  # tree-sitter's rows are then LSP lines (positions.py)
    source = text.encode("utf-8", errors="surrogatepass")
    unit = build_unit(source, doc.parse(source) if to_file is None else None)
    report.includes.extend(unit.includes)
    headers = read_headers(doc.path, unit.includes, doc.read_include)
    report.headers.extend(h.path for h in headers)
    texts = [h.source for h in headers]
    header_units = [header_unit(h.source) for h in headers]
    for header in header_units:
        unit.include(header)
    index = LineIndex(text, converted=True)
    ordered = _kernels_in_order(unit)
    outside = _outside_kernels(ordered, source, texts)
    file_context = FileContext(doc.path, unit, index, to_file, tuple(
        HeaderText(h.path, u.tree.root_node, header_index(h.source)) for h, u in zip(headers, header_units, strict=True)),
        host_key=outside.hexdigest())
    context = (_context_key(unit, source) + hashlib.blake2b(b"\0".join(texts), digest_size=8).hexdigest()).encode()
    records = own_records(file_context)
    if to_file is None:
        report.launch_records.extend(records)
        report.defines = unit.defined_names
    directives_possible = b"cudalens" in source
    external = doc.launch_index.external(doc.path) if doc.launch_index is not None and to_file is None \
        else _NO_EXTERNAL
    named = _named_launches(doc, records, external)
    instantiated = instantiations(file_context)
    view = memoryview(source)  # each kernel's text is hashed in place, not copied
    for kernel in unit.kernels:
        if kernel.body is None:
            continue
        start, end = kernel.node.start_point[0] + 1, kernel.node.end_point[0] + 1
        launches = named.get(kernel.name)
        launched = launches.of(kernel) if launches is not None else None
        configs = _configs(doc, kernel, launched, instantiated.get(kernel.name), report) \
            if launched is not None or kernel.name in instantiated or directives_possible else _NO_LAUNCH
        # Embedded sources map positions through their .py text: their results are reused only in place.
        # (from the `template <…>` line on: a renamed template parameter changes what the body's names are;
        # the walk found that line: `Node.parent` walks down from the root past every kernel before this one)
        head = kernel.template if kernel.template is not None else kernel.node
        digest = hashlib.blake2b(view[head.start_byte:kernel.node.end_byte], digest_size=16)
        digest.update(context)
        if configs is not _NO_LAUNCH:
            digest.update(repr([_config_key(c) for c in configs]).encode())
        key = (digest.digest(), None if to_file is None else start)
        cached = _moved(doc.kernel_cache.get(key), start)
        if cached is None:
            try:
                models = [build_model(file_context, kernel, config) for config in configs]
                findings, owners = merge([run_rules(m) for m in models], models)
                info = kernel_info(models[0], findings, agreed=len(models) == 1)
                cached = CachedKernel(findings, info, start, end, tuple(owners))
            except Exception as exc:  # one kernel the analyzer cannot handle must not cost the others
                report.errors.append(f"{doc.path}:{start}: internal error analysing `{kernel.name}`: "
                                     f"{type(exc).__name__}: {exc}")
                continue
        # launch sites live in host code that moves independently of the kernel: always read them afresh
        sites = launches.sites if launches is not None else ()
        if cached.info.launch_sites is not sites and cached.info.launch_sites != sites:
            cached = replace(cached, info=replace(cached.info, launch_sites=sites))
        if launched is not None and cached.findings and (
                cached.launched is None or cached.launched[0] is not launched or cached.launched[1] is not configs):
            # the same launches (the index hands back the same objects until one changes): the same findings,
            # the very objects, which the server then finds already converted without comparing them
            cached = replace(cached, launched=(launched, configs, with_launches(
                cached.findings, list(cached.owners), configs, launched)))
        doc.next_cache[key] = cached
        report.findings.extend(cached.launched[2] if launched is not None and cached.findings else cached.findings)
        report.kernels.append(cached.info)
    report.findings.extend(_unit_findings(doc, source, ordered, outside, file_context, report))
    report.findings[:] = distinct(report.findings)


def distinct(findings: list[Finding]) -> list[Finding]:
    """One finding per place and claim: a helper inlined into many kernels (a texture sampler's 16 template
    instances) gave the same finding, word for word, once per kernel, and the editor and `cudalens check` showed
    it 16 times. The first is kept (the very object, where nothing is added), with the related places of the
    others (the call through which each kernel reaches the line) and, as evidence `kernels`, every kernel that
    reaches it (a profile's counters are per kernel)."""
    same: dict[tuple, list[Finding]] = {}
    for finding in findings:
        key = (finding.path, finding.code, finding.severity, finding.message, finding.span, finding.fix)
        same.setdefault(key, []).append(finding)
    out: list[Finding] = []
    for first, *others in same.values():
        related = first.related + tuple(dict.fromkeys(r for f in others for r in f.related if r not in first.related))
        own = [first.kernel] if first.kernel else []
        kernels = list(dict.fromkeys(own + [f.kernel for f in others if f.kernel is not None]))
        if related == first.related and len(kernels) == len(own):
            out.append(first)
            continue
        evidence = first.evidence if len(kernels) == len(own) else \
            (*(e for e in first.evidence if e[0] != "kernels"), ("kernels", ", ".join(kernels)))
        out.append(replace(first, related=related, evidence=evidence))
    return out


_NO_LAUNCH = [KernelConfig()]
_NO_EXTERNAL: dict[str, list] = {}  # one object, never written: a document without an index keeps its cache


def _named_launches(doc: DocumentAnalyzer, records: list, external: dict) -> dict[str, KernelLaunches]:
    """The launches by kernel name, this file's and the index's. Kept on the document while both lists are the
    same objects (own_records and the index hand back the same ones until a launch moves or changes), so that
    typing in a kernel reuses each name's configurations: rebuilding them for a file of 600 launches cost
    ~5 ms an edit."""
    if doc.launch_cache is not None and doc.launch_cache[0] is records and doc.launch_cache[1] is external:
        return doc.launch_cache[2]
    by_kernel: dict[str, list] = {}
    for r in records:
        by_kernel.setdefault(r.kernel, []).append(r)
    for name, found in external.items():
        by_kernel[name] = by_kernel.get(name, []) + found
    named = {name: KernelLaunches(found, doc.path) for name, found in by_kernel.items()}
    doc.launch_cache = (records, external, named)
    return named


def _configs(doc: DocumentAnalyzer, kernel, launched: LaunchedAs | None, instantiated: list[KernelConfig] | None,
             report: AnalysisReport) -> list[KernelConfig]:
    """The configurations to analyse the kernel in (its launches here and in the index, else its explicit
    instantiations; and its directives)."""
    directives = []
    for d in launch_directives(kernel):
        if isinstance(d, DirectiveError):
            report.errors.append(f"{doc.path}:{d.line}: {d.message}")
        else:
            directives.append(d)
    if not directives:
        if launched is not None:
            return launched.chosen(kernel)
        if not instantiated:
            return _NO_LAUNCH
    return kernel_configs(kernel, launched.configs if launched is not None else instantiated or [], directives)


def _config_key(config: KernelConfig) -> tuple:
    return (config.block, config.template, config.args, config.source, config.where, config.block_params,
            config.bounds)


def _outside_kernels(ordered: list, source: bytes, headers: list[bytes]):
    """A digest of the text outside kernel bodies, and of the headers: what host code, launch sites and the
    file-level rules read (typing inside a kernel leaves it unchanged)."""
    digest = hashlib.blake2b(digest_size=16)
    view = memoryview(source)  # slices of it are hashed without copying the text
    last = 0
    for kernel in ordered:
        digest.update(view[last:kernel.body.start_byte])
        last = kernel.body.end_byte
    digest.update(view[last:])
    digest.update(b"\0".join(headers))
    return digest


def _kernels_in_order(unit: Unit) -> list:
    """The kernels with a body, in source order, none inside another's body."""
    out, last = [], 0
    for kernel in sorted((k for k in unit.kernels if k.body is not None), key=lambda k: k.body.start_byte):
        if kernel.body.start_byte >= last:
            out.append(kernel)
            last = kernel.body.end_byte
    return out


def _unit_findings(doc: DocumentAnalyzer, source: bytes, ordered: list, outside, context: FileContext,
                   report: AnalysisReport) -> list[Finding]:
    """The file-level rules' findings. They read host code, helpers, launch sites and kernel signatures, never
    kernel bodies: while only a kernel body changes in place (typing inside a kernel), the last ones stand."""
    if context.to_file is not None:  # embedded CUDA: positions go through the .py text, which may have moved
        return run_unit_rules(context, report)
    digest = outside.copy()
    # where the kernels are: the findings after them move with them (one repr for all: 1,700 kernels)
    digest.update(repr([(kernel.body.start_point, kernel.body.end_point) for kernel in ordered]).encode())
    key = digest.hexdigest()
    if doc.unit_cache is not None and doc.unit_cache[0] == key:
        return doc.unit_cache[1]
    errors_before = len(report.errors)
    findings = run_unit_rules(context, report)
    doc.unit_cache = (key, findings) if len(report.errors) == errors_before else None
    return findings


@dataclass(frozen=True)
class Header:
    name: str  # as written in the `#include`
    path: str  # where it was found (findings in it are placed there)
    source: bytes


def read_headers(path: str, includes: list[str], read_include: IncludeReader | None) -> list[Header]:
    """The local headers a file includes and those they include (ggml's `WARP_SIZE` comes from common.cuh by way
    of quantize.cuh), each once, a header's own includes before it as the preprocessor reads them; at most
    MAX_INCLUDE_DEPTH levels and MAX_HEADER_BYTES in all."""
    if read_include is None:
        return []
    walk = _HeaderWalk(read_include)
    walk.visit(includes, path, 1)
    return walk.out


class _HeaderWalk:
    """read_headers' state. (A nested function that called itself was a reference cycle: each update's headers,
    their sources included, then waited for the cyclic collector to be freed.)"""

    def __init__(self, read_include: IncludeReader) -> None:
        self.read_include = read_include
        self.locate = getattr(read_include, "locate", None)
        self.out: list[Header] = []
        self.seen: set[str] = set()
        # (name, including folder) already looked up: a name is located once per folder, not once per
        # `#include` (a 20,000-line file's 121 includes of 7 system headers were 121 lookups on disk an edit)
        self.asked: set[tuple[str, str]] = set()
        self.total = 0

    def visit(self, names: list[str], including: str, depth: int) -> None:
        folder = os.path.dirname(including)
        for name in names:
            if self.total > MAX_HEADER_BYTES:
                return
            if (name, folder) in self.asked:
                continue
            self.asked.add((name, folder))
            # where it is, before reading it: a header included from many (ggml's common.cuh) is read once
            where = (self.locate(name, including) if self.locate is not None else None) \
                or str(Path(including).parent / name)
            key = os.path.normpath(where)
            if key in self.seen:
                continue
            self.seen.add(key)
            try:
                text = self.read_include(name, including)
            except OSError:
                text = None
            if text is None:
                continue
            source = parser_text(text.replace("\0", " ")).encode("utf-8", errors="surrogatepass")
            self.total += len(source)
            if self.total > MAX_HEADER_BYTES:
                return
            if depth < MAX_INCLUDE_DEPTH:
                self.visit(header_unit(source).includes, where, depth + 1)
            self.out.append(Header(name, where, source))


def launch_entry(path: str, text: str, read_include: IncludeReader | None) -> FileLaunches:
    # a file too large to analyse is not read for launches; one without `<<` holds none in any spelling
    if len(text) > MAX_ANALYSED_CHARS or "<<" not in text:
        return FileLaunches((), frozenset(), frozenset())
    text = parser_text(text.replace("\0", " "))  # as run_pipeline reads it: the same positions, launches `<<<`
    if "<<<" not in text:
        return FileLaunches((), frozenset(), frozenset())
    source = text.encode("utf-8", errors="surrogatepass")
    unit = build_unit(source)
    headers = read_headers(path, unit.includes, read_include)
    for header in headers:
        unit.include(header_unit(header.source))
    context = FileContext(path, unit, LineIndex(text, converted=True), None)
    return FileLaunches(tuple(own_records(context)), header_identities(h.path for h in headers), unit.defined_names)


@lru_cache(maxsize=64)
def header_index(source: bytes) -> LineIndex:
    return LineIndex(source.decode("utf-8", errors="surrogatepass"), converted=True)  # read_headers converted it


@dataclass(frozen=True)
class CachedKernel:
    findings: list[Finding]
    info: KernelInfo
    start_line: int
    end_line: int
    owners: tuple[tuple[int, ...], ...] = ()  # per finding: the configurations it holds for
    # (LaunchedAs, configurations, the findings with those launches as related information), as last given
    launched: tuple | None = None


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
    return CachedKernel(findings, info, start, cached.end_line + delta, cached.owners)


def shift(span: Span, delta: int) -> Span:
    return Span(span.line + delta, span.column, span.end_line + delta, span.end_column)


def _context_key(unit, source: bytes) -> str:
    """What a kernel's analysis depends on outside its own text: macros, structs, helpers, launch sites."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr(sorted((m.name, m.params, m.body) for m in unit.macros.values())).encode())
    view = memoryview(source)  # hashed in place, not copied
    for f in (f for fs in unit.functions.values() for f in fs if not f.is_kernel):
        # a header's helper has the header's byte offsets: its own text, not a slice of this source
        digest.update(b"\0")
        digest.update((f.node.text or b"") if f.from_header else view[f.node.start_byte:f.node.end_byte])
    for launch in unit.launches:
        digest.update(b"\0")
        digest.update(view[launch.node.start_byte:launch.node.end_byte])
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


def kernel_info(model: KernelModel, findings: list[Finding], agreed: bool = True) -> KernelInfo:
    """`agreed`: the kernel is analysed in one configuration (else its block is not one shape)."""
    block = model.block if agreed else None
    if not agreed:
        warp_shape = "one analysis per launch configuration"
    elif block is None:
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


