"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request's diff."""

from __future__ import annotations

from cudalens.analysis.findings import Finding, Severity

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
    return f"::{_LEVEL[f.severity]} {joined}::{_escape_data(f.message)}"


def render(findings: list[Finding]) -> str:
    return "".join(annotation(f) + "\n" for f in findings)
