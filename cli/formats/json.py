"""`{"version": 1, "findings": [...]}`, each finding in `Finding.to_json()`'s shape."""

from __future__ import annotations

import json

from cudalens.analysis.findings import Finding

VERSION = 1


def render(findings: list[Finding]) -> str:
    return json.dumps({"version": VERSION, "findings": [f.to_json() for f in findings]}, indent=2) + "\n"
