"""Per-document state: which files the server serves, their latest results, which files on disk each result
depends on, and how their `#include`s are read.

Plain Python, no LSP types: the scheduler and the handlers share it; it is tested without a server.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cudalens.analysis import file_kinds
from cudalens.analysis.api import AnalysisReport, KernelInfo
from cudalens.analysis.findings import Finding
from cudalens.analysis.syntax_check import SyntaxBaseline

if TYPE_CHECKING:
    from cudalens.server.pipeline_on_save import LastRun


# Only for documents without a file name (an unsaved "Untitled-1"): otherwise the extension decides.
LANGUAGE_KINDS = {"cuda-cpp": "cuda", "cuda": "cuda", "python": "python"}


def served_kind(path: str, language_id: str | None = None, text: str = "") -> str | None:
    """"cuda" for .cu/.cuh and a header holding device code, "python" for .py, None for everything else (by
    extension and, for a header, its text: analysis/file_kinds.py)."""
    if file_kinds.is_cuda_file(path, text):
        return "cuda"
    if path.endswith(".py"):
        return "python"
    if language_id and not Path(path).suffix and not path.startswith("/"):
        return LANGUAGE_KINDS.get(language_id)
    return None


def may_contain_cuda(kind: str, text: str) -> bool:
    """A Python file is worth analysing only if it mentions CUDA; any other costs a few substring searches."""
    return kind == "cuda" or file_kinds.may_contain_cuda(text)


@dataclass
class Analysed:
    """The result of analysing one version of a document."""

    version: int | None
    report: AnalysisReport | None  # None: not analysed (no CUDA, or too large)
    lines: list[str]  # the text the report's positions refer to
    depends_on: frozenset[str] = frozenset()  # resolved paths of the headers it read
    messages: tuple[str, ...] = ()  # problems with the project's config, shown once
    diagnostics: list | None = None  # the LSP form, made once on first use
    launches_changed: frozenset[str] = frozenset()  # kernels whose launches this analysis changed in the index
    syntax: SyntaxBaseline | None = None  # what an offered edit of this text is checked against (edit_check.py)

    @property
    def findings(self) -> list[Finding]:
        return self.report.findings if self.report is not None and self.report.is_cuda else []

    @property
    def kernels(self) -> list[KernelInfo]:
        return self.report.kernels if self.report is not None and self.report.is_cuda else []


@dataclass
class DocState:
    uri: str
    path: str
    kind: str
    version: int | None
    text: str
    result: Analysed | None = None
    closed: bool = False
    last_run: LastRun | None = None  # the GPU half's results of the last save (pipeline_on_save.py)
    in_sync: bool = True  # False after a change that did not fit the text (service.out_of_sync)
    # Set whenever `result` changes: pull-diagnostics requests wait on it.
    updated: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def analysis_path(self) -> str:
        """The name the analyzer sees: it goes by extension too, so an unsaved buffer gets one."""
        if served_kind(self.path, text=self.text) == self.kind:
            return self.path
        return self.path + (".cu" if self.kind == "cuda" else ".py")

    def set_result(self, result: Analysed) -> None:
        self.result = result
        self.updated.set()
        self.updated = asyncio.Event()


class DocumentStore:
    """The open documents the server serves, by URI."""

    def __init__(self) -> None:
        self._docs: dict[str, DocState] = {}

    def open(
        self, uri: str, path: str, version: int | None, text: str, language_id: str | None = None
    ) -> DocState | None:
        kind = served_kind(path, language_id, text)
        if kind is None:
            return None
        state = DocState(uri, path, kind, version, text)
        self._docs[uri] = state
        return state

    def get(self, uri: str) -> DocState | None:
        return self._docs.get(uri)

    def change(self, uri: str, version: int | None, text: str) -> DocState | None:
        state = self._docs.get(uri)
        if state is not None:
            state.version, state.text = version, text
        return state

    def close(self, uri: str) -> DocState | None:
        state = self._docs.pop(uri, None)
        if state is not None:
            state.closed = True
            state.updated.set()
        return state

    def __iter__(self):
        return iter(list(self._docs.values()))

    def __len__(self) -> int:
        return len(self._docs)

    def text_of_path(self, path: str) -> str | None:
        """The editor's text of an open file (newer than the disk)."""
        for state in list(self._docs.values()):  # called from the analysis thread
            if state.path == path:
                return state.text
        return None

    def dependents(self, path: str) -> list[DocState]:
        """Open documents whose last analysis read `path`, or whose reference file it may be."""
        changed = Path(path)
        found = []
        for state in self._docs.values():
            if state.path == path:
                continue  # the editor owns this text; the disk copy does not matter
            deps = state.result.depends_on if state.result else frozenset()
            own = Path(state.path)
            same_stem = changed.suffix == ".py" and changed.parent == own.parent and (
                changed.stem.startswith(own.stem) or own.stem.startswith(changed.stem)
            )
            if path in deps or same_stem:
                found.append(state)
        return found
