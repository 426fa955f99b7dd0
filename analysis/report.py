"""What the analyzer reports about one document: its findings, its kernels and their launch sites.

The types every caller reads (the server, the CLI, the profiler, the Judge), apart from the entry points in
api.py, so that the pipeline that fills them and the entry points that call the pipeline import them from here
and not from each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cudalens.analysis.features import KernelFeatures
from cudalens.analysis.findings import Finding, Span
from cudalens.analysis.launch_index import LaunchRecord

# Given a header name as written in `#include "x.cuh"` and the including file's path, its text, or None.
IncludeReader = Callable[[str, str], "str | None"]

# Beyond this size a document is not analysed, by `cudalens check` or the language server: it gets one CL001
# finding instead. Analysis is linear in the kernels (~10 ms each on a 2-core machine, so a million
# characters of kernels takes ~20 s and ~150 MB); the limit keeps a generated or hostile file from holding a
# CI job, or the server's analysis thread that every other document waits on, for minutes.
MAX_ANALYSED_CHARS = 1_000_000


@dataclass(frozen=True)
class LaunchSite:
    """One `kernel<<<grid, block, smem, stream>>>` site, with the values that were constant."""

    span: Span
    grid: tuple[int, int, int] | None
    block: tuple[int, int, int] | None
    dynamic_shared_bytes: int | None
    path: str | None = None


@dataclass(frozen=True)
class KernelInfo:
    """What the hover and code lens show about a `__global__` function."""

    name: str
    span: Span  # the whole definition
    name_span: Span  # the function's name
    block: tuple[int, int, int] | None  # the launch's block shape when every site agrees on a constant
    launch_bounds: tuple[int, ...] | None
    warp_shape: str  # e.g. "32×1 lanes (threadIdx.x)" or "8×4 lanes (threadIdx.x × threadIdx.y)"
    static_shared_bytes: int | None
    uses_dynamic_shared: bool
    launch_sites: tuple[LaunchSite, ...] = ()
    template: bool = False
    # What the Judge predicts a verdict from and the hover shows (None: a summary built without a model).
    features: KernelFeatures | None = None


@dataclass
class AnalysisReport:
    path: str
    is_cuda: bool  # False: a .py file without CUDA (the server then costs nothing for it)
    findings: list[Finding] = field(default_factory=list)
    kernels: list[KernelInfo] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)  # header names this document includes
    # where the local headers it includes were found, and those they include (pipeline.read_headers)
    headers: list[str] = field(default_factory=list)
    # For .py files: the CUDA sources found in the Python text, with the first and last .py lines of each string.
    embedded_sources: list[tuple[str, int, int]] = field(default_factory=list)
    # Internal errors, one line each (the kernel they concern is skipped, the rest is still analysed).
    errors: list[str] = field(default_factory=list)
    # Every launch site of the document (of its own kernels and of others'), for a workspace's LaunchIndex.
    launch_records: list[LaunchRecord] = field(default_factory=list)
    defines: frozenset[str] = frozenset()  # the functions it defines (Unit.defined_names), for the same index


def oversized_report(path: str, text: str) -> AnalysisReport | None:
    """The report of a document above MAX_ANALYSED_CHARS: one info finding that says it was not analysed."""
    if len(text) <= MAX_ANALYSED_CHARS:
        return None
    from cudalens.analysis.rules.file_not_analysed import not_analysed

    why = (f"{len(text) / 1e6:.1f} million characters, above the analyzer's limit of "
           f"{MAX_ANALYSED_CHARS / 1e6:g} million (split the file to have it checked)")
    return AnalysisReport(path=path, is_cuda=True, findings=[not_analysed(path, why)])
