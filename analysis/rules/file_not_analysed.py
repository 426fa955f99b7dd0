"""CL001: a file that cudalens did not analyse, and why (too large, or its bytes are not text)."""

from __future__ import annotations

from cudalens.analysis.findings import Finding, Severity, Span
from cudalens.analysis.rule_base import Rule


class FileNotAnalysed(Rule):
    """## What it does
    Says that a `.cu`, `.cuh` or PyTorch file was not analysed, and why:

    - it is larger than the analyzer's limit (one million characters, for `cudalens check` and the editor
      alike), or
    - its bytes are not text cudalens can read: UTF-16 or UTF-32 without a byte order mark, or binary data.
      (UTF-8, and UTF-16/32 with a byte order mark, are read; a NUL byte is read as a space, as compilers do.)

    ## Why is this bad?
    No other finding can be reported for the file, so a check that passes says nothing about it. A file that
    is not text would not build either.

    ## Known problems
    The size limit is `info`: a generated file may well be that large. The limit bounds the time and memory
    one file can take (about 20 s and 150 MB per million characters on a 2-core machine); it is not a
    setting, so a repository cannot lift it. Bytes that are not text are a `warning`: nothing was analysed.

    ## Example
    A generated `kernels_all.cu` of 5 MB, or a `.cu` saved by an editor as "UTF-16 LE" without a byte order
    mark.

    ## Use instead
    Split the generated file (one file per kernel family), or save the file as UTF-8.

    ## Fix safety
    No automatic fix.

    ## References
    - GCC, "Character sets" (source files are read as UTF-8 unless told otherwise)
    """

    code = "CL001"
    name = "file-not-analysed"
    summary = "File not analysed: too large, or not text"
    default_severity = Severity.INFO
    source = "input"  # reported where a file is read, before any rule runs


def not_analysed(path: str, why: str, severity: Severity = Severity.INFO) -> Finding:
    """The finding for a file not analysed, on its first character."""
    return Finding(
        path=path,
        code=FileNotAnalysed.code,
        rule=FileNotAnalysed.name,
        severity=severity,
        message=f"Not analysed: {why}",
        span=Span(1, 1, 1, 1),
    )
