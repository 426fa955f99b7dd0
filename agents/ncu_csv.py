"""Nsight Compute's `--csv --page raw` output → `ProfileMetrics` per kernel, and the ncu command line for it."""

from __future__ import annotations

import csv
import io
import re

from cudalens.agents.evaluation import ProfileMetrics

_KERNEL_DEF = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?[\w:<>,\s*&]*?\b(\w+)\s*\(")
_IDENTITY_COLUMNS = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Section Name",
    "Metric Name",
}


def kernel_names(source: str) -> list[str]:
    """The `__global__` functions defined in a source (CUDA or Python embedding CUDA), in order."""
    return list(dict.fromkeys(_KERNEL_DEF.findall(source)))


def ncu_command(ncu: str, metrics: tuple[str, ...], kernels: list[str], log_file: str) -> list[str]:
    """Profile only the file's kernels (a regex on the function's base name, so templates and overloads
    match, unlike an exact --kernel-name), only inside the cudaProfilerStart/Stop range."""
    command = [
        ncu,
        "--target-processes",
        "all",
        "--profile-from-start",
        "off",
        "--clock-control",
        "none",
        "--metrics",
        ",".join(metrics),
        "--csv",
        "--page",
        "raw",
        "--log-file",
        log_file,
    ]
    if kernels:
        command += [
            "--kernel-name-base",
            "function",
            "--kernel-name",
            "regex:^(" + "|".join(re.escape(k) for k in kernels) + r")\b",
        ]
    return command


def _number(text: str) -> float | None:
    cleaned = text.strip().replace(",", "")
    if not cleaned or cleaned in ("n/a", "N/A"):
        return None
    try:
        return float(cleaned)
    except ValueError:
        return None


def parse_ncu_csv(text: str) -> list[ProfileMetrics]:
    """One `ProfileMetrics` per profiled kernel (the first launch of each name), from ncu's raw CSV page.

    The log also holds `==PROF==` / `==WARNING==` lines; the CSV starts at the header row ("ID", ...) and its
    second row holds the units."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(ln for ln in lines[start:] if not ln.startswith("==")))))
    if len(rows) < 2:
        return []
    header, body = rows[0], rows[1:]
    if body and not _number(body[0][0] if body[0] else ""):
        body = body[1:]  # the units row
    seen: dict[str, ProfileMetrics] = {}
    for row in body:
        if len(row) != len(header):
            continue
        cells = dict(zip(header, row, strict=True))
        name = cells.get("Kernel Name", "?")
        base = re.split(r"[<(]", name, maxsplit=1)[0].strip().split()[-1] if name.strip() else "?"
        if base in seen:
            continue
        values = {
            k: v for k, raw in cells.items() if k not in _IDENTITY_COLUMNS and (v := _number(raw)) is not None
        }
        seen[base] = ProfileMetrics.of(base, values)
    return list(seen.values())
