"""`cudalens check --statistics`: how many findings of each rule, most frequent first."""

from __future__ import annotations

import json
from collections import Counter

from cudalens.analysis.findings import Finding


def render_statistics(findings: list[Finding], as_json: bool = False) -> str:
    counts = Counter(f.code for f in findings)
    names = {f.code: f.rule for f in findings}
    fixable = {f.code for f in findings if f.fix is not None}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if as_json:
        data = [{"code": c, "name": names[c], "count": n, "fixable": c in fixable} for c, n in rows]
        return json.dumps(data, indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    lines = [f"{n:>{width}}\t{c}\t{'[*]' if c in fixable else '[ ]'} {names[c]}" for c, n in rows]
    return "".join(line + "\n" for line in lines)
