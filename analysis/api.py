"""The analyzer's entry points: text in, findings and kernel summaries out. Pure: no I/O but what the caller
passes (header texts come through `read_include`; workspace/includes.py's `DiskIncludes` reads them from
disk).

`analyze_text` is for one-shot use (CLI, pre-commit); `DocumentAnalyzer` keeps the parse tree and per-kernel
results of one open document so an edit re-parses incrementally and re-analyses only the kernels it touched
(the language server).
"""

from __future__ import annotations

from cudalens.analysis import pipeline
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.launch_index import FileLaunches, LaunchIndex
from cudalens.analysis.report import (
    MAX_ANALYSED_CHARS,
    AnalysisReport,
    IncludeReader,
    KernelInfo,
    LaunchSite,
    oversized_report,
)

# The report's types are defined in report.py; callers may take them from here with the entry points.
__all__ = [
    "MAX_ANALYSED_CHARS", "AnalysisReport", "DocumentAnalyzer", "IncludeReader", "KernelInfo", "LaunchSite",
    "analyze_text", "launch_entry", "oversized_report",
]


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
    return pipeline.launch_entry(path, text, read_include)


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
        # (own launch records, the index's external launches, the KernelLaunches by name made of them)
        self.launch_cache: tuple | None = None

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
        self.next_cache = {}
        report = pipeline.run_pipeline(self, text)
        self.kernel_cache, self.next_cache = self.next_cache, {}
        return report
