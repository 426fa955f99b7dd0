"""SARIF 2.1.0, the format code-scanning services (GitHub, GitLab, Azure DevOps) import.

One run; the tool's rules come from the registry with their documentation, so a viewer can show why a
finding matters; results carry locations, related locations and fixes. Columns count Unicode code points, as
cudalens's do (SARIF's default would be UTF-16 code units), and the run says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePath
from urllib.parse import quote

from cudalens import __version__
from cudalens.analysis.codes import all_rules
from cudalens.analysis.findings import Finding, Fix, Severity, Span
from cudalens.analysis.rule_base import RuleInfo

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note", Severity.HINT: "note"}


def _first_section(doc: str) -> str:
    """The text under the doc's first heading ("What it does"), for fullDescription."""
    sections = re.split(r"^#+\s.*$", doc, flags=re.MULTILINE)
    body = next((s.strip() for s in sections if s.strip()), "")
    return " ".join(body.split())


def _rule_descriptor(info: RuleInfo) -> dict:
    descriptor: dict = {
        "id": info.code,
        "name": info.name,
        "shortDescription": {"text": info.summary},
        "defaultConfiguration": {"level": _LEVEL[info.severity]},
        "properties": {"source": info.source, "status": info.status, "fixable": info.fixable},
    }
    if info.doc:
        descriptor["fullDescription"] = {"text": _first_section(info.doc) or info.summary}
        descriptor["help"] = {"text": info.doc, "markdown": info.doc}
    return descriptor


def _artifact(path: str) -> dict:
    pure = PurePath(path)
    if pure.is_absolute():
        return {"uri": Path(path).as_uri()}
    # a name's undecodable bytes (surrogates) are percent-encoded as the bytes they were, as as_uri does
    return {"uri": quote(pure.as_posix(), errors="surrogateescape"), "uriBaseId": SRCROOT}


def _region(span: Span) -> dict:
    line = max(span.line, 1)
    return {
        "startLine": line,
        "startColumn": max(span.column, 1),
        "endLine": max(span.end_line, line),
        "endColumn": max(span.end_column, 1),
    }


def _location(path: str, span: Span) -> dict:
    return {"physicalLocation": {"artifactLocation": _artifact(path), "region": _region(span)}}


def _fix(path: str, fix: Fix) -> dict:
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {
                "artifactLocation": _artifact(path),
                "replacements": [
                    {"deletedRegion": _region(e.span), "insertedContent": {"text": e.new_text}}
                    for e in fix.edits
                ],
            }
        ],
        "properties": {"applicability": fix.applicability},
    }


def _result(f: Finding, rule_index: dict[str, int]) -> dict:
    result: dict = {
        "ruleId": f.code,
        "level": _LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [_location(f.path, f.span)],
    }
    if f.code in rule_index:
        result["ruleIndex"] = rule_index[f.code]
    if f.related:
        result["relatedLocations"] = [
            {"id": i, **_location(r.path or f.path, r.span), "message": {"text": r.message}}
            for i, r in enumerate(f.related)
        ]
    if f.fix is not None and f.fix.edits:
        result["fixes"] = [_fix(f.path, f.fix)]
    properties: dict = {"rule": f.rule, "severity": f.severity.value}
    if f.kernel:
        properties["kernel"] = f.kernel
    if f.evidence:
        properties["evidence"] = f.evidence_dict()
    result["properties"] = properties
    return result


def render(findings: list[Finding]) -> str:
    rules = [_rule_descriptor(info) for info in all_rules()]
    known = {r["id"] for r in rules}
    # codes reported by other parts (the compiler, the GPU runs) that the registry does not document yet
    unregistered = {f.code: f.rule for f in findings if f.code not in known}
    for code in sorted(unregistered):
        rules.append(
            {"id": code, "name": unregistered[code], "shortDescription": {"text": unregistered[code]}}
        )
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cudalens",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, rule_index) for f in findings],
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
