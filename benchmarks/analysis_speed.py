"""Analysis time of a ~3,000-line .cu file: cold, and after a one-line edit inside one kernel (the editor's case:
incremental, only the changed kernel re-analysed). Goal: ≤ 20 ms after an edit on a 2-core machine.

Run: python benchmarks/analysis_speed.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from big_cuda_file import big_cuda_source

from cudalens.analysis.api import DocumentAnalyzer, analyze_text


def main() -> None:
    text = big_cuda_source()
    lines = text.count("\n") + 1
    kernels = text.count("__global__")
    t0 = time.perf_counter()
    analyze_text("big.cu", text)
    first = time.perf_counter() - t0
    colds = []
    for _ in range(3):
        t0 = time.perf_counter()
        report = analyze_text("big.cu", text)
        colds.append(time.perf_counter() - t0)

    doc = DocumentAnalyzer("big.cu")
    doc.update(text)
    edits = []
    target = text.index("out[i] = in[i];")
    for k in range(30):
        edited = text[:target] + f"out[i] = in[i] + {k}.0f;" + text[target + len("out[i] = in[i];"):]
        t0 = time.perf_counter()
        doc.update(edited)
        edits.append(time.perf_counter() - t0)
    print(f"file: {lines} lines, {kernels} kernels, {len(report.findings)} findings")
    print(f"cold (first call, imports warm): {first * 1000:.1f} ms")
    print(f"cold (median of 3):             {statistics.median(colds) * 1000:.1f} ms")
    print(f"after a one-line edit (median of {len(edits)}): {statistics.median(edits) * 1000:.1f} ms"
          f"  (p90 {sorted(edits)[int(len(edits) * 0.9)] * 1000:.1f} ms; goal <= 20 ms)")


if __name__ == "__main__":
    main()
