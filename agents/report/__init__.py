"""`cudalens report`: one self-contained HTML page of an optimize run or a kernel file (data.py reads, charts.py
draws, page.py writes); the CLI and the server's "Show report" call `write_report`. A whole model's page is
made of tables (model/report.py builds its ReportData) and written by `write_page`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cudalens.agents.evaluation import ProfileMetrics
from cudalens.agents.gpu_specs import DEFAULT_GPU, GpuSpecs
from cudalens.agents.report.data import ReportData, ReportError, Table, load
from cudalens.agents.report.page import render


def write_report(target: Path, out: Path, gpu: GpuSpecs = DEFAULT_GPU, profile: bool = False,
                 measured: Sequence[ProfileMetrics] = (), gpu_why: str = "") -> Path:
    """Writes the page of `target` (a run folder or a kernel file) to `out` and returns it; `ReportError` for a
    target that is neither. `gpu_why`: why `gpu`'s peaks (gpu_specs.peaks_of), said under the title."""
    data = load(target, gpu, profile, measured)
    data.gpu_why = gpu_why
    return write_page(data, out)


def write_page(data: ReportData, out: Path) -> Path:
    """`data` as one HTML page at `out` (its folder made); returns `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data), encoding="utf-8")
    return out


__all__ = ["ReportData", "ReportError", "Table", "write_page", "write_report"]
