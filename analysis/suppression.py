"""Suppression comments: `// cudalens: ignore[CL101,CL3]`, `# cudalens: ignore[...]` in Python files, and the
file-level `cudalens: ignore-file[...]`. A bare `ignore` (no brackets) silences every code.

A comment trailing code silences findings that start on its own line; a comment alone on its line silences
findings that start on that line or the next (the line it sits above). Pure: text and findings in, findings out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cudalens.analysis.findings import Finding
from cudalens.analysis.positions import line_contents

_CODE = re.compile(r"^CL\d{0,3}$")
# `#` is a comment only in Python; in CUDA it starts a preprocessor directive. Python files may embed CUDA
# sources in strings, so there `//` and `/*` count too.
_MARKERS_CUDA = r"//+|/\*+"
_MARKERS_PYTHON = r"#+|//+|/\*+"
_DIRECTIVE = (
    r"(?P<marker>{markers})\s*cudalens\s*:\s*(?P<kind>ignore-file|ignore)\b(?:\[(?P<codes>[^\]]*)\])?"
)


@dataclass(frozen=True)
class Suppression:
    line: int  # 1-based line of the comment
    codes: tuple[str, ...] | None  # None: every code (a bare `ignore`)
    file_level: bool
    own_line: bool  # the comment is the only thing on its line
    unknown: tuple[str, ...] = ()  # entries that are not codes or code prefixes (reported, never matched)

    def covers(self, code: str) -> bool:
        return self.codes is None or any(code.startswith(c) for c in self.codes)

    def applies_to_line(self, line: int) -> bool:
        return self.file_level or line == self.line or (self.own_line and line == self.line + 1)


def _is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def parse_suppressions(text: str, path: str) -> list[Suppression]:
    """Every suppression comment of a document, in line order."""
    if "cudalens" not in text:
        return []
    pattern = re.compile(_DIRECTIVE.format(markers=_MARKERS_PYTHON if _is_python(path) else _MARKERS_CUDA))
    found: list[Suppression] = []
    for number, line in enumerate(line_contents(text), start=1):
        if "cudalens" not in line:
            continue
        for match in pattern.finditer(line):
            entries = [c.upper() for c in re.split(r"[,\s]+", match["codes"] or "") if c]
            unknown = tuple(c for c in entries if not _CODE.match(c))
            # `ignore[]` or `ignore[typo]` names no code: it silences nothing rather than everything
            codes = None if match["codes"] is None else tuple(c for c in entries if _CODE.match(c))
            found.append(
                Suppression(
                    line=number,
                    codes=codes,
                    file_level=match["kind"] == "ignore-file",
                    own_line=line[: match.start()].strip() == "",
                    unknown=unknown,
                )
            )
    return found


def is_suppressed(finding: Finding, suppressions: list[Suppression]) -> bool:
    return any(s.applies_to_line(finding.span.line) and s.covers(finding.code) for s in suppressions)


def apply_suppressions(text: str, findings: list[Finding], path: str) -> list[Finding]:
    """The findings that no suppression comment in `text` silences."""
    suppressions = parse_suppressions(text, path)
    if not suppressions:
        return list(findings)
    return [f for f in findings if not is_suppressed(f, suppressions)]


def unused_suppressions(text: str, findings: list[Finding], path: str) -> list[Suppression]:
    """Suppressions that silence none of `findings` (the findings before suppression)."""
    return [
        s
        for s in parse_suppressions(text, path)
        if not any(s.applies_to_line(f.span.line) and s.covers(f.code) for f in findings)
    ]
