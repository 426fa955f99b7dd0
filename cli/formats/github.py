"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request's diff.

Values are escaped as @actions/core escapes them (`%`, CR and LF in the message; also `:` and `,` in
properties), which the runner undoes: a file named with a newline still gets its annotation, and no text of
the repository can end the command's line and start another (a compiler's message keeps its line breaks in
the annotation). Every other character the text format escapes (control and escape sequences, bidi
overrides, Unicode line and paragraph separators) is written as an escape there too, in the message and in
each property: a file name is the pull request's, and the runner shows both in the log.
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


def _shown(value: str) -> str:
    # CR and LF are left to GitHub's escaping, which the runner undoes: a file named with a newline keeps its
    # annotation on the file
    return printable(value, keep="\r\n")


def annotation(f: Finding) -> str:
    props = {
        "file": f.path,
        "line": f.span.line,
        "col": f.span.column,
        "endLine": f.span.end_line,
        "endColumn": f.span.end_column,
        "title": f.code,
    }
    joined = ",".join(f"{key}={_escape_property(_shown(str(value)))}" for key, value in props.items())
    return f"::{_LEVEL[f.severity]} {joined}::{_escape_data(_shown(f.message))}"


def render(findings: list[Finding]) -> str:
    return "".join(annotation(f) + "\n" for f in findings)
