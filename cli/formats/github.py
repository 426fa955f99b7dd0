"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request's diff.

Values are escaped as @actions/core escapes them (`%`, CR and LF in the message; also `:` and `,` in
properties), which the runner undoes: a file named with a newline still gets its annotation, and no text of
the repository can end the command's line and start another (a compiler's message keeps its line breaks in
the annotation). Other control characters in the message are written as escapes, as in the text format.
"""

from __future__ import annotations

from cudalens.analysis.findings import Finding, Severity
from cudalens.cli.escape import printable

_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
    Severity.HINT: "notice",
}


def _escape_data(value: str) -> str:
    # the escaping of @actions/core's toCommandValue/escapeData
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    props = {
        "file": f.path,
        "line": f.span.line,
        "col": f.span.column,
        "endLine": f.span.end_line,
        "endColumn": f.span.end_column,
        "title": f.code,
    }
    joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in props.items())
    return f"::{_LEVEL[f.severity]} {joined}::{_escape_data(printable(f.message, keep=chr(13) + chr(10)))}"


def render(findings: list[Finding]) -> str:
    return "".join(annotation(f) + "\n" for f in findings)
