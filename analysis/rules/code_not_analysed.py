"""CL002: a kernel or function that cudalens did not analyse, or analysed only in part, and why (too deep, or
too long to interpret)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.nesting import MAX_NESTING
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.simulate import MAX_STEPS, Cut
from cudalens.analysis.unit import Function, LeftOut

if TYPE_CHECKING:
    from cudalens.analysis.file_context import FileContext
    from cudalens.analysis.model import KernelModel

# why the lane interpreter stopped, as the message says it
_CUT: dict[Cut, str] = {
    Cut.STEPS: f"the interpreter stopped after {MAX_STEPS:,} steps, too long a kernel to follow whole",
    Cut.RECURSION: "helpers and macros nest deeper than the interpreter can follow",
}


class CodeNotAnalysed(Rule):
    """## What it does
    Says that a kernel, a helper or a file-scope declaration was not analysed, or a kernel only in part, and
    why:

    - its syntax tree is deeper than the analyzer's limit of 256 levels (what makes it deep is named: an
      expression of 500 terms, parentheses or `if` statements nested 1,000 deep...): none of it is analysed,
      and a call of such a helper is an unknown value to its callers;
    - the lane interpreter stopped before the end of the kernel: after 20,000 steps (statements and
      expressions, loops counting their sampled iterations), or where inlined helpers and macros nest deeper
      than it can follow. What it saw up to there is checked; what follows is not.

    ## Why is this bad?
    A check that passes says nothing about code it did not read: without this finding a kernel holding a
    500-term sum passed as clean, whatever it did after the sum.

    ## Known problems
    `info`: generated code may well be that large, and nothing here says that it is wrong. The limits bound
    the time and memory one kernel can take (a 20,000-term sum took 50 s before the depth limit; it now takes
    well under a second to be reported); they are not settings. A header's declarations deeper than the limit
    are left out without a finding in the file that includes them; checking the header itself reports them.

    ## Example
    ```cuda
    __global__ void dot500(const float* a, float* out) {
        out[threadIdx.x] = a[0] * a[1] + a[2] * a[3] + /* ... 500 terms, generated */ a[998] * a[999];
    }
    ```

    ## Use instead
    Split the expression into partial sums over a few statements, or a loop (`#pragma unroll` keeps it
    unrolled); nest less; split a very long kernel into device functions.

    ## Fix safety
    No automatic fix.

    ## References
    - Clang, `-fbracket-depth` (the compiler's own limit on nesting, 256 by default)
    """

    code = "CL002"
    name = "code-not-analysed"
    summary = "Kernel or function not analysed, or only in part: too deep, or too long to interpret"
    default_severity = Severity.INFO
    depends_on = NO_FACTS  # about the analysis, not the kernel's behaviour

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        run = next((r for r in kernel.runs if r.truncated is not None), None)
        if run is None:
            return
        # at the statement it stopped in, which says where without a line number in the message (the cached
        # findings of a kernel move with it; their messages do not change)
        yield kernel.finding(
            type(self), run.stopped_at or kernel.function.name_node,
            f"Kernel `{kernel.name}` analysed only up to here: {_CUT[run.truncated]}; what follows was not "
            "checked", evidence={"stopped": run.truncated.value})

    def check_unit(self, unit: FileContext) -> Iterator[Finding]:
        for item in unit.unit.left_out:
            deep = item.deep
            line = unit.span(deep.outermost).line
            yield unit.finding(
                type(self), item.function.name_node if item.function is not None else item.node.children[0],
                f"{_subject(item)} not analysed: {deep.what} (line {line}), {deep.depth:,} levels of nesting "
                f"where the analyzer stops at {MAX_NESTING}",
                kernel=item.function.name if item.function is not None and item.function.is_kernel else None,
                evidence={"depth": deep.depth, "limit": MAX_NESTING},
                related=((deep.outermost, deep.what),))


def _subject(item: LeftOut) -> str:
    f: Function | None = item.function
    if f is None or not f.name:
        return "A file-scope declaration"
    return f"Kernel `{f.name}`" if f.is_kernel else f"Function `{f.name}`"
