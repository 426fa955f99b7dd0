"""Analysis time of code that is too deep or too long: a kernel with one sum of N terms (`s = a[0] + ... +
a[N-1];`, a left-deep tree of N levels), N nested parentheses, N nested `if`s, and N statements in a row. Each
case prints the seconds `analyze_text` takes and what it reported about the kernel (its "not analysed"
finding, or "analysed"), so a run shows both the cost and that nothing passed in silence.

The cost should grow linearly with N (a quadratic cost shows as ×4 per doubling). Figures, not a timed test.

Run: python benchmarks/deep_code.py [--quick]
"""

from __future__ import annotations

import sys
import time

from cudalens.analysis.api import analyze_text

# a store the coalescing rule flags: it must show after the deep part whenever the kernel is analysed
_FLAGGED = "a[threadIdx.x * 32] = 1;"


def long_sum(n: int) -> str:
    terms = " + ".join(f"a[{i}]" for i in range(n))
    return f"__global__ void k(float* a, float* out) {{ float s = {terms}; out[threadIdx.x] = s; {_FLAGGED} }}\n"


def nested_parentheses(n: int) -> str:
    return f"__global__ void k(float* a) {{ a[threadIdx.x] = {'(' * n}1{')' * n}; {_FLAGGED} }}\n"


def nested_ifs(n: int) -> str:
    return "__global__ void k(float* a) { " + "if (a[0] > 0) { " * n + _FLAGGED + " }" * n + " }\n"


def statements(n: int) -> str:
    body = " ".join(f"a[threadIdx.x + {i}] = {i};" for i in range(n))
    return f"__global__ void k(float* a) {{ {body} {_FLAGGED} }}\n"


CASES = (
    ("sum of N terms", long_sum, (5_000, 10_000, 20_000)),
    ("N nested parentheses", nested_parentheses, (1_000, 5_000, 20_000)),
    ("N nested ifs", nested_ifs, (1_000, 5_000, 20_000)),
    ("N statements", statements, (5_000, 10_000, 20_000)),
)


def outcome(report) -> str:
    said = [f"{f.code} {f.message}" for f in report.findings if f.code in ("CL001", "CL002")]
    if report.errors:
        return "internal error: " + report.errors[0]
    return said[0] if said else "analysed: " + (", ".join(sorted({f.code for f in report.findings})) or "no finding")


def main() -> None:
    quick = "--quick" in sys.argv
    analyze_text("warm.cu", statements(10))  # imports and tree-sitter queries, outside the timings
    for label, make, sizes in CASES:
        for n in sizes[:2] if quick else sizes:
            text = make(n)
            t0 = time.perf_counter()
            report = analyze_text("deep.cu", text)
            seconds = time.perf_counter() - t0
            print(f"{label:<22} N={n:>6,}  {seconds:7.2f} s  {outcome(report)[:110]}", flush=True)


if __name__ == "__main__":
    main()
