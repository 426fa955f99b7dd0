"""Parsers of ncu's CSV pages (`ncu --import REPORT --csv --page raw|source`), tolerant of what varies
between versions: log lines (`==PROF==`, `==WARNING==`) mixed in, a units row, thousands separators,
`-`/`n/a` cells, column order, extra columns."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator

from cudalens.worker.child.results import KernelMetrics, LineCounters

_LOG = re.compile(r"^==[A-Z]+==")
_LABELLED = re.compile(r"^(Kernel Name|Function Name|File Path):\s*(.+)$", re.IGNORECASE)


def number(cell: str) -> float | None:
    text = cell.strip().replace(",", "").removesuffix("%").strip()
    if not text or text.lower() in {"-", "n/a", "nan"}:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _rows(text: str) -> Iterator[list[str]]:
    lines = [line for line in text.splitlines() if line.strip() and not _LOG.match(line)]
    yield from csv.reader(io.StringIO("\n".join(lines)))


def parse_raw(text: str) -> list[KernelMetrics]:
    """One `KernelMetrics` per profiled launch of `--page raw --csv`."""
    header: list[str] | None = None
    out: list[KernelMetrics] = []
    for row in _rows(text):
        if header is None:
            if row and row[0].strip() == "ID":
                header = [h.strip() for h in row]
            continue
        if len(row) != len(header) or not row[0].strip():  # the units row has an empty ID
            continue
        record = dict(zip(header, row, strict=True))
        metrics: dict[str, float] = {}
        texts: dict[str, str] = {}
        for name, cell in record.items():
            if "__" not in name:
                continue
            value = number(cell)
            if value is None:
                if cell.strip():
                    texts[name] = cell.strip()
            else:
                metrics[name] = value
        launch = number(record.get("ID", "")) or 0
        out.append(KernelMetrics(record.get("Kernel Name", "").strip(), int(launch), metrics, texts))
    return out


# Column labels of the source page → LineCounters fields. ncu has renamed a few across versions.
_SOURCE_COLUMNS: dict[str, str] = {
    "instructions executed": "inst_executed",
    "predicated-on thread instructions executed": "thread_inst_executed",
    "l1 tag requests global": "global_requests",
    "l2 theoretical sectors global": "global_sectors",
    "l2 theoretical sectors global ideal": "global_sectors_ideal",
    "l1 wavefronts shared": "shared_wavefronts",
    "l1 wavefronts shared ideal": "shared_wavefronts_ideal",
    "divergent branches": "divergent_branches",
    "warp stall sampling (all samples)": "stall_samples",
    "warp stall sampling (all cycles)": "stall_samples",
}
_LINE_HEADERS = {"# line", "line no", "line", "line number", "#"}


def parse_source(text: str) -> list[LineCounters]:
    """Per-line counters of `--page source --print-source cuda` (or `cuda,sass`: the SASS rows are skipped).

    Kernels are announced by a `"Kernel Name","..."` row and files by a `"File Path"`/`"File Name"` row;
    each table starts with a header row whose first cell names the line column.
    """
    kernel = file = ""
    header: list[str] | None = None
    columns: dict[int, str] = {}
    out: list[LineCounters] = []
    for row in _rows(text):
        if not row:
            continue
        first = row[0].strip()
        low = first.lower()
        if m := _LABELLED.match(first):  # `Kernel Name: k` in one cell, as some versions print it
            kernel, header = (m.group(2), None) if m.group(1).lower() != "file path" else (kernel, None)
            file = m.group(2) if m.group(1).lower() == "file path" else file
            continue
        if low in ("kernel name", "function name") and len(row) >= 2:
            kernel, header = row[1].strip(), None
            continue
        if low in ("file path", "file name", "file") and len(row) >= 2 and not _is_header(row):
            file, header = row[1].strip(), None
            continue
        if _is_header(row):
            header = [h.strip().lower() for h in row]
            columns = {}
            for i, h in enumerate(header):
                field_name = _SOURCE_COLUMNS.get(h)
                if field_name and field_name not in columns.values():  # the first of duplicate labels
                    columns[i] = field_name
            continue
        if header is None or len(row) != len(header):
            continue
        line = number(row[0])
        if line is None or not first.isdigit():
            continue  # SASS rows (addresses) and filler rows
        values: dict[str, float] = {}
        for i, field_name in columns.items():
            values[field_name] = number(row[i]) or 0.0
        source_idx = header.index("source") if "source" in header else None
        source = row[source_idx] if source_idx is not None else ""
        if not any(values.values()):
            continue
        out.append(LineCounters(file=file, line=int(line), kernel=kernel, source=source.rstrip(), **values))
    return out


def _is_header(row: list[str]) -> bool:
    cells = {c.strip().lower() for c in row}
    return row[0].strip().lower() in _LINE_HEADERS and "source" in cells
