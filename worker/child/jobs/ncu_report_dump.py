"""Reads an `.ncu-rep` with the `ncu_report` module that ships with Nsight Compute (`extras/python`) and
prints JSON: `{"kernels": [KernelMetrics], "lines": [LineCounters], "files": {path: text}}`.

Run as `python ncu_report_dump.py REPORT METRIC,METRIC... SOURCE_METRIC=field,...` with `extras/python` on
PYTHONPATH, in a child process: `ncu_report` is a native module, and a crash in it must not take down the
caller. Standard library plus `ncu_report` only.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    return None


def _per_pc(action: object, name: str) -> dict[int, float]:
    metric = action.metric_by_name(name)  # type: ignore[attr-defined]
    if metric is None:
        return {}
    subs = [metric]
    if name.startswith("group:"):
        subs = [action[n] for n in str(metric.value()).split(",") if n]  # type: ignore[index]
    out: dict[int, float] = defaultdict(float)
    for m in subs:
        if not m.num_instances() or not m.has_correlation_ids():
            continue
        ids = m.correlation_ids()
        for i in range(m.num_instances()):
            value = _number(m.value(i))
            if value is not None:
                out[int(ids.value(i))] += value
    return out


def dump(report_path: str, metrics: list[str], source_metrics: dict[str, str]) -> dict:
    import ncu_report

    ctx = ncu_report.load_report(report_path)
    kernels, files = [], {}
    lines: dict[tuple[str, str, int], dict] = {}
    launch = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            try:
                name = action.name(ncu_report.IAction.NameBase_DEMANGLED)
            except Exception:  # a module without name bases
                name = action.name()
            values, texts = {}, {}
            for metric_name in metrics:
                m = action.metric_by_name(metric_name)
                if m is None:
                    continue
                v = m.value()
                if _number(v) is not None:
                    values[metric_name] = _number(v)
                elif v is not None:
                    texts[metric_name] = str(v)
            kernels.append({"name": name, "launch": launch, "metrics": values, "text": texts})
            launch += 1
            try:
                files.update({str(k): str(v) for k, v in dict(action.source_files()).items()})
            except Exception:  # a report without imported sources
                pass
            for metric_name, field in source_metrics.items():
                for pc, value in _per_pc(action, metric_name).items():
                    try:
                        info = action.source_info(pc)
                    except Exception:  # a PC without line information
                        info = None
                    if info is None or not info.line():
                        continue
                    key = (name, info.file_name(), int(info.line()))
                    row = lines.setdefault(key, {"file": key[1], "line": key[2], "kernel": name})
                    row[field] = row.get(field, 0.0) + value
    for row in lines.values():
        text = files.get(row["file"], "")
        src = text.splitlines()
        if 0 < row["line"] <= len(src):
            row["source"] = src[row["line"] - 1].rstrip()
    return {"kernels": kernels, "lines": list(lines.values()), "files": files}


def main(argv: list[str]) -> int:
    report, metrics = argv[0], [m for m in argv[1].split(",") if m]
    source_metrics = dict(pair.split("=", 1) for pair in argv[2].split(",") if "=" in pair)
    json.dump(dump(report, metrics, source_metrics), sys.stdout)
    return 0

