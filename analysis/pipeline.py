"""Runs parsing, the kernel model and the rules over one document. (Being built: returns no findings yet.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudalens.analysis.api import AnalysisReport

if TYPE_CHECKING:
    from cudalens.analysis.api import DocumentAnalyzer


def run_pipeline(doc: DocumentAnalyzer, text: str) -> AnalysisReport:
    is_cuda = doc.path.endswith((".cu", ".cuh")) or "__global__" in text
    return AnalysisReport(path=doc.path, is_cuda=is_cuda)
