"""Score the static analyzer against the measured truth of the accuracy corpus: precision and recall per
category, line by line.

    python benchmarks/accuracy/score.py              # against truth.json's measurements → results.md
    python benchmarks/accuracy/score.py --expected   # against the labels the kernels were written to show
    python benchmarks/accuracy/score.py --suite realworld [...]   # the real-world suite: score_realworld.py

Categories and the rule codes that answer them: uncoalesced ↔ CL1xx, divergence ↔ CL2xx, bank_conflict ↔
CL301, sync (synccheck) ↔ CL302, race (racecheck) ↔ CL303.

Matching: a finding matches a truth line when the statement around the truth line overlaps the statement(s)
the finding's span covers, inside the same kernel; a divergence finding on a branch or loop header also
covers the block it heads (idle lanes are measured on the body's lines, the condition runs on all lanes). A race or sync problem measured as a group of lines (the
two accesses of a hazard) is one truth item, found when any of its lines is matched; a barrier or race finding
matches through its related locations too (CL302 names the skipped barrier and the one the threads wait at,
which is where synccheck reports; CL303 names both accesses). Precision counts the
distinct lines the analyzer flags per category and kernel (two findings on one line count once); only
kernels that were measured are scored. Each category is scored twice: every finding, and only findings of
severity warning or error (what the analyzer claims to have proven).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # a sibling module, shared with measure.py

from cudalens.analysis.api import analyze_text
from cudalens.analysis.findings import Finding, Severity

HERE = corpus.HERE
GROUPED = ("sync", "race")


def category_of(code: str) -> str | None:
    if code.startswith("CL1"):
        return "uncoalesced"
    if code.startswith("CL2"):
        return "divergence"
    return {"CL301": "bank_conflict", "CL302": "sync", "CL303": "race"}.get(code)


@dataclass
class Tally:
    truth_items: int = 0
    truth_found: int = 0
    flagged: int = 0
    flagged_right: int = 0
    misses: list[str] = field(default_factory=list)  # truth items no finding matched
    false_alarms: list[str] = field(default_factory=list)  # flagged lines matching no truth item

    @property
    def precision(self) -> float | None:
        return self.flagged_right / self.flagged if self.flagged else None

    @property
    def recall(self) -> float | None:
        return self.truth_found / self.truth_items if self.truth_items else None


class Statements:
    """Line → the first and last line of the statement it belongs to (a statement ends in `;`, `{` or `}`)."""

    def __init__(self, text: str) -> None:
        self.ends = []
        self.code = [raw.split("//")[0].rstrip() for raw in text.splitlines()]
        for code in self.code:
            self.ends.append(not code or code.startswith("#") or code[-1] in ";{}")

    def region(self, first: int, last: int) -> tuple[int, int]:
        """The statement, and when it heads a block (`if (...) {`, `for (...) {`), the block too: the
        lanes idle on a divergent branch show up on the lines of its body, not on the condition's line."""
        start, end = self.extent(first, last)
        if self.code[end - 1].endswith("{"):
            depth = 0
            for number in range(end, len(self.code) + 1):
                depth += self.code[number - 1].count("{") - self.code[number - 1].count("}")
                if depth <= 0:
                    return start, number
        elif re.match(r"\s*(if|for|while)\b", self.code[end - 1]) and end < len(self.code):
            return start, self.extent(end + 1, end + 1)[1]
        return start, end

    def extent(self, first: int, last: int) -> tuple[int, int]:
        start = first
        while start > 1 and not self.ends[start - 2]:
            start -= 1
        end = max(first, last)
        while end < len(self.ends) and not self.ends[end - 1]:
            end += 1
        return start, end


def truth_items(entry: dict, kernel: str, category: str, expected: bool) -> list[list[int]]:
    """The truth of one kernel and category as items, each a list of lines."""
    if expected:
        lines = (entry.get("expected") or {}).get(kernel, {}).get(category, [])
        if category in GROUPED:
            return [sorted(lines)] if lines else []
        return [[n] for n in lines]
    labels = entry["kernels"].get(kernel, {}).get("labels", {})
    if category in GROUPED:
        return [list(g) for g in labels.get(f"{category}_groups", [])]
    return [[n] for n in labels.get(category, [])]


def scored_kernels(entry: dict, expected: bool) -> list[str]:
    if expected:
        return sorted(entry.get("expected") or {})
    return sorted(k for k, v in entry.get("kernels", {}).items() if "lines" in v or v.get("labels"))


def analyze(path: Path) -> list[Finding]:
    def read_include(name: str, including: str) -> str | None:
        header = Path(including).parent / name
        return header.read_text() if header.is_file() else None

    return analyze_text(str(path), path.read_text(), read_include=read_include).findings


def score(truth: dict, expected: bool, proven_only: bool) -> dict[str, Tally]:
    tallies = {c: Tally() for c in corpus.CATEGORIES}
    for name, entry in sorted(truth["files"].items()):
        path = HERE / name
        if not path.is_file():
            continue
        text = path.read_text()
        statements = Statements(text)
        spans = corpus.kernel_spans(text)
        findings = analyze(path)
        for kernel in scored_kernels(entry, expected):
            for category, tally in tallies.items():
                where = statements.region if category == "divergence" else statements.extent
                # A barrier or race finding is about a pair of places (the skipped barrier and the one the
                # threads wait at; the two accesses): its related locations count as its lines too.
                paired = category in ("sync", "race")
                flagged = sorted(
                    {
                        (where(f.span.line, f.span.end_line),
                         *((statements.extent(r.span.line, r.span.end_line) for r in f.related) if paired else ()))
                        for f in findings
                        if category_of(f.code) == category
                        and (not proven_only or f.severity.rank >= Severity.WARNING.rank)
                        and _kernel_of(f, spans) == kernel
                    }
                )
                items = truth_items(entry, kernel, category, expected)
                _tally(tally, f"{name}:{kernel}", statements, flagged, items)
    return tallies


def _kernel_of(finding: Finding, spans: list) -> str | None:
    """The kernel a finding belongs to: the analyzer's word (a finding in a `__device__` helper names the
    kernel that calls it), else the kernel whose lines contain it."""
    if finding.kernel:
        return re.split(r"[<(]", finding.kernel)[0].split("::")[-1].strip()
    return corpus.kernel_at(spans, finding.span.line)


def _tally(tally: Tally, where: str, statements: Statements, flagged: list, items: list[list[int]]) -> None:
    """One file's findings (each a tuple of line extents) against its truth items (each a list of lines)."""
    tally_places(
        tally, where, {"": statements},
        [tuple(("", extent) for extent in finding) for finding in flagged],
        [[("", line) for line in item] for item in items],
    )


def tally_places(tally: Tally, where: str, statements: dict[str, Statements], flagged: list, items: list) -> None:
    """Findings against truth items across files: a finding is a tuple of (file, (first, last line)) extents
    (its own, then its related locations'), an item a list of (file, line) places. They match when the
    statements overlap in the same file."""
    def hits(extent: tuple[str, tuple[int, int]], place: tuple[str, int]) -> bool:
        (file, (first, last)), (item_file, line) = extent, place
        if file != item_file or file not in statements:
            return False
        start, end = statements[file].extent(line, line)
        return start <= last and first <= end

    def name(file: str, text: str) -> str:
        return f"{where} {file + ':' if file else 'line '}{text}"

    tally.truth_items += len(items)
    for item in items:
        if any(hits(extent, place) for finding in flagged for extent in finding for place in item):
            tally.truth_found += 1
        else:
            tally.misses.append(name(item[0][0], "/".join(str(line) for _, line in item)))
    tally.flagged += len(flagged)
    for finding in flagged:
        file, (first, last) = finding[0]
        if any(hits(e, place) for e in finding for item in items for place in item):
            tally.flagged_right += 1
        else:
            tally.false_alarms.append(name(file, f"{first}" + (f"-{last}" if last > first else "")))


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def render(truth: dict, expected: bool) -> str:
    every = score(truth, expected, proven_only=False)
    proven = score(truth, expected, proven_only=True)
    files = [n for n in truth["files"] if (HERE / n).is_file()]
    kernels = sum(len(scored_kernels(truth["files"][n], expected)) for n in files)
    against = "the labels the kernels were written to show (design intent, not measured)" if expected else (
        f"measured truth ({truth.get('gpu') or 'GPU unknown'}, generated {truth.get('generated', '?')})"
    )
    out = [
        "# Static analyzer accuracy",
        "",
        f"Against {against}: {kernels} kernels in {len(files)} files. Generated by "
        "`benchmarks/accuracy/score.py`; the method is in its docstring and in measure.py's.",
        "",
        "| category | rules | truth items | flagged lines | precision | recall | precision (warning+) | recall (warning+) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    rules = {"uncoalesced": "CL1xx", "divergence": "CL2xx", "bank_conflict": "CL301", "sync": "CL302", "race": "CL303"}
    for category in corpus.CATEGORIES:
        a, p = every[category], proven[category]
        out.append(
            f"| {category} | {rules[category]} | {a.truth_items} | {a.flagged} | {_fmt(a.precision)} | "
            f"{_fmt(a.recall)} | {_fmt(p.precision)} | {_fmt(p.recall)} |"
        )
    out += ["", "Goal (issue 2): precision ≥ 0.95 and recall ≥ 0.9.", ""]
    for category in corpus.CATEGORIES:
        tally = every[category]
        if tally.misses or tally.false_alarms:
            out.append(f"## {category}")
            out += [f"- missed: {m}" for m in tally.misses]
            out += [f"- false alarm: {m}" for m in tally.false_alarms]
            out.append("")
    return "\n".join(out)


def _realworld_section(path: Path) -> str:
    """The real-world suite's section of an existing results file (score_realworld.py writes it): kept."""
    from score_realworld import BEGIN, END

    text = path.read_text() if path.is_file() else ""
    if BEGIN in text and END in text:
        return "\n" + text[text.index(BEGIN) : text.index(END) + len(END)] + "\n"
    return ""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["--suite", "realworld"]:  # the real-world suite has its own scorer (score_realworld.py)
        import score_realworld

        return score_realworld.main(argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", type=Path, default=HERE / "truth.json")
    parser.add_argument("--expected", action="store_true", help="score against the `// expect:` labels")
    parser.add_argument("--write", type=Path, help="where to write the Markdown (default: results.md when measured)")
    args = parser.parse_args(argv)
    try:
        truth = json.loads(args.truth.read_text())
    except (OSError, ValueError) as exc:
        print(f"score: cannot read {args.truth}: {exc}", file=sys.stderr)
        return 2
    measured = any(entry.get("kernels") for entry in truth.get("files", {}).values())
    if not args.expected and not measured:
        print(f"score: {args.truth} holds no measurement yet: run measure.py on the GPU, or pass --expected",
              file=sys.stderr)
        return 2
    text = render(truth, args.expected)
    print(text)
    target = args.write or (None if args.expected else HERE / "results.md")
    if target is not None:
        target.write_text(text + "\n" + _realworld_section(target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
