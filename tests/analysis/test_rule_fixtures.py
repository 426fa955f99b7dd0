"""Each fixture holds positive and negative cases for a rule: a line that must carry findings ends with
`// expect: CL101` (several codes: `// expect: CL101, CL301`); every other line must carry none of the
codes the fixture is about (its file name prefix, e.g. `CL1_*.cu` is about CL1xx). Both noisy and missing
matches fail, with the analyzer's messages in the report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudalens.analysis.api import analyze_text
from cudalens.analysis.config import AnalysisConfig

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT = re.compile(r"(?://|#)\s*expect:\s*((?:CL\d{3}\s*,?\s*)+)")


def _expected(text: str) -> set[tuple[int, str]]:
    out = set()
    for i, line in enumerate(text.splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(i, code) for code in re.findall(r"CL\d{3}", m.group(1))}
    return out


@pytest.mark.parametrize("path", sorted(p for p in FIXTURES.iterdir() if p.suffix in (".cu", ".cuh", ".py")),
                         ids=lambda p: p.name)
def test_fixture(path: Path) -> None:
    prefix = path.name.split("_", 1)[0]  # "CL1", "CL301"...
    text = path.read_text()
    report = analyze_text(str(path), text, AnalysisConfig(min_severity="hint"))  # hint-level rules too
    found = {(f.line, f.code) for f in report.findings if f.code.startswith(prefix)}
    expected = _expected(text)
    messages = "\n".join(f"  {f.line}: {f.code} {f.severity.value} {f.message}" for f in report.findings
                         if f.code.startswith(prefix))
    assert found == expected, (
        f"missing: {sorted(expected - found)}\nunexpected: {sorted(found - expected)}\nfindings:\n{messages}")
