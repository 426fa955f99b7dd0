"""The analyzer's entry points: text in, findings and kernel summaries out. Pure: no I/O but what the caller
passes (header texts come through `read_include`).

`analyze_text` is for one-shot use (CLI, pre-commit); `DocumentAnalyzer` keeps the parse tree and per-kernel
results of one open document so an edit re-parses incrementally and re-analyses only the kernels it touched
(the language server).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.features import KernelFeatures
from cudalens.analysis.findings import Finding, Span
from cudalens.analysis.launch_index import FileLaunches, LaunchIndex, LaunchRecord

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
    # For .py files: the CUDA sources found in the Python text, with the first and last .py lines of each string.
    embedded_sources: list[tuple[str, int, int]] = field(default_factory=list)
    # Internal errors, one line each (the kernel they concern is skipped, the rest is still analysed).
    errors: list[str] = field(default_factory=list)
    # Every launch site of the document (of its own kernels and of others'), for a workspace's LaunchIndex.
    launch_records: list[LaunchRecord] = field(default_factory=list)


def oversized_report(path: str, text: str) -> AnalysisReport | None:
    """The report of a document above MAX_ANALYSED_CHARS: one info finding that says it was not analysed."""
    if len(text) <= MAX_ANALYSED_CHARS:
        return None
    from cudalens.analysis.rules.file_not_analysed import not_analysed

    why = (f"{len(text) / 1e6:.1f} million characters, above the analyzer's limit of "
           f"{MAX_ANALYSED_CHARS / 1e6:g} million (split the file to have it checked)")
    return AnalysisReport(path=path, is_cuda=True, findings=[not_analysed(path, why)])


class DiskIncludes:
    """The standard IncludeReader: `name` next to the including file, then in `include_dirs`; `locate` says
    where that is (findings in a header are placed there)."""

    def __init__(self, include_dirs: tuple[str, ...] = ()) -> None:
        self.include_dirs = tuple(include_dirs)

    def locate(self, name: str, including_path: str) -> str | None:
        from pathlib import Path

        for folder in (Path(including_path).parent, *map(Path, self.include_dirs)):
            candidate = folder / name
            if candidate.is_file():
                return str(candidate)
        return None

    def __call__(self, name: str, including_path: str) -> str | None:
        from pathlib import Path

        from cudalens.analysis.files import load_source

        found = self.locate(name, including_path)
        return load_source(Path(found)).text if found is not None else None


read_include_from_disk = DiskIncludes()


def analyze_text(
    path: str,
    text: str,
    config: AnalysisConfig | None = None,
    read_include: IncludeReader | None = None,
    launch_index: LaunchIndex | None = None,
) -> AnalysisReport:
    """Analyse one `.cu`/`.cuh`/`.py` document (`launch_index`: the launches of the other files seen)."""
    return DocumentAnalyzer(path, config, read_include, launch_index).update(text)


def launch_entry(path: str, text: str, read_include: IncludeReader | None = None) -> FileLaunches:
    """What a `.cu`/`.cuh` file contributes to a LaunchIndex: the values of its launch sites, the headers it
    includes (transitively) and the kernels it defines. Cheap for a file without `<<<` (no parse)."""
    from cudalens.analysis.pipeline import launch_entry as entry

    return entry(path, text, read_include)


class DocumentAnalyzer:
    """The analysis state of one open document; `update` with each new text."""

    def __init__(
        self, path: str, config: AnalysisConfig | None = None, read_include: IncludeReader | None = None,
        launch_index: LaunchIndex | None = None,
    ) -> None:
        self.path = path
        self.config = config or AnalysisConfig()
        self.read_include = read_include
        # the launches the other files of the workspace make, of kernels this document may define
        self.launch_index = launch_index
        # Per-kernel results of the last update, keyed by the kernel's text, context and position: an edit
        # re-analyses only the kernels it touched.
        self.kernel_cache: dict[tuple, tuple] = {}
        self.next_cache: dict[tuple, tuple] = {}
        self._source: bytes | None = None
        self._tree = None
        # The file-level rules' last findings and the key of what they read (see pipeline._unit_findings).
        self.unit_cache: tuple[str, list] | None = None

    def parse(self, source: bytes):
        """The tree of the document's CUDA text, re-parsed incrementally from the previous one."""
        from cudalens.analysis.incremental import reparse

        self._tree = reparse(self._source, self._tree, source)
        self._source = source
        return self._tree

    def syntax_baseline(self, text: str):
        """The SyntaxBaseline of `text`, the text of the last update, from that update's tree (a copy: the next
        update edits the analyzer's own)."""
        from cudalens.analysis.syntax_check import SyntaxBaseline

        tree = self._tree.copy() if self._tree is not None and not self.path.endswith(".py") else None
        return SyntaxBaseline(text, self.path, tree)

    def update(self, text: str) -> AnalysisReport:
        from cudalens.analysis.pipeline import run_pipeline

        self.next_cache = {}
        report = run_pipeline(self, text)
        self.kernel_cache, self.next_cache = self.next_cache, {}
        return report
