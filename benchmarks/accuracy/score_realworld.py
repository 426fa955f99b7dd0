"""Score cudalens on the real-world suite: every finding against what the hardware saw on its line, per code.

    python benchmarks/accuracy/score_realworld.py [--truth truth_realworld.json] [--write]
    python benchmarks/accuracy/score.py --suite realworld ...        (the same)

The analyzer runs as a user runs it, `cudalens check benchmarks/accuracy/realworld --format json` (so whatever
it learns across the files of a folder -- launches in other files -- counts). Each finding is then scored
against one of two truths, and the tables say which:
- **hardware** (truth_realworld.json, measured by measure_realworld.py on an H200): CL1xx against the
  uncoalesced lines (ncu sectors per request), CL2xx against divergence (active lanes), CL301 against bank
  conflicts (wavefronts), CL302 against synccheck, CL303 against racecheck -- matched by statement, inside the
  same kernel, as score.py matches the corpus. A finding on a kernel that was not measured is not scored
  (counted apart); a kernel that touches no shared memory counts as race-free without a racecheck run.
- **hand labels** (realworld_labels.json): codes no counter measures (CL4xx launch limits, CL5xx arithmetic,
  CL6xx host code, CL7xx atomics, CL8xx): each finding of theirs was read and labelled true or false, with a
  one-line reason, kept apart from the hardware truth. A finding with no label is listed, not scored.

Precision is per code and per severity class (warning/error, which the analyzer claims to have proven, and info);
recall is per category (any code of it finding the truth item), with each code's share of it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from score import GROUPED, Statements, Tally, category_of, tally_places

HERE = Path(__file__).resolve().parent
ROOT = HERE / "realworld"
TRUTH = HERE / "truth_realworld.json"
LABELS = HERE / "realworld_labels.json"
CATEGORY_TOOL = {"uncoalesced": "ncu", "divergence": "ncu", "bank_conflict": "ncu", "race": "racecheck",
                 "sync": "synccheck"}
BEGIN, END = "<!-- realworld:begin -->", "<!-- realworld:end -->"


@dataclass(frozen=True)
class Found:
    """One finding, as `cudalens check --format json` printed it, its paths relative to the suite."""

    file: str
    line: int
    end_line: int
    code: str
    proven: bool  # severity warning or error
    kernel: str  # the kernel's name without template arguments ('' for host code)
    related: tuple[tuple[str, int, int], ...] = ()
    message: str = ""

    @property
    def severity_class(self) -> str:
        return "warning/error" if self.proven else "info"


@dataclass
class Unit:
    """One kernel of one program: its measured truth (merged over template instantiations) and findings."""

    program: str
    kernel: str
    measured: set[str] = field(default_factory=set)  # the tools whose answer counts
    items: dict[str, list[list[tuple[str, int]]]] = field(default_factory=lambda: defaultdict(list))
    findings: list[Found] = field(default_factory=list)


# ---------------------------------------------------------------- inputs


def run_analyzer(root: Path) -> list[Found]:
    """The findings of `cudalens check ROOT`, once each."""
    done = subprocess.run(
        [sys.executable, "-m", "cudalens", "check", str(root), "--format", "json", "--exit-zero", "--exclude", "*.json"],
        capture_output=True, text=True, check=False,
    )
    try:
        payload = json.loads(done.stdout)
    except ValueError:
        raise SystemExit(
            f"score_realworld: cudalens check printed no JSON (exit {done.returncode}): {done.stderr[-500:]}"
        ) from None
    return parse_findings(payload, root)


def parse_findings(payload: dict, root: Path) -> list[Found]:
    found = []
    for f in payload.get("findings", []):
        related = tuple(
            (_relative(r["path"], root), r["line"], r.get("end_line", r["line"])) for r in f.get("related") or []
        )
        # one finding the analysis reported once for every kernel that reaches its line (pipeline.distinct):
        # scored in each, as the hardware's counters are per kernel
        kernels = str((f.get("evidence") or {}).get("kernels") or f.get("kernel") or "").split(", ")
        for kernel in kernels:
            found.append(Found(
                _relative(f["path"], root), f["line"], f.get("end_line") or f["line"], f["code"],
                f["severity"] in ("warning", "error"), base_name(kernel), related, f.get("message", ""),
            ))
    return sorted(set(found), key=lambda x: (x.file, x.line, x.code, x.kernel))


def _relative(path: str, root: Path) -> str:
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def base_name(kernel: str) -> str:
    return re.split(r"[<(\[ ]", kernel.strip(), maxsplit=1)[0].split("::")[-1] if kernel else ""


def units_from_truth(truth: dict, manifest: dict) -> dict[tuple[str, str], Unit]:
    """(program, kernel) → its truth; every kernel with at least one tool's answer."""
    facts = {p["name"]: p["kernels"] for p in manifest.get("programs", [])}
    # A sanitizer whose canary came out wrong (its kernel filter matched nothing, say) answers nothing here.
    failed = {check.split()[0] for check, ok in truth.get("canary", {}).items() if not ok}
    units: dict[tuple[str, str], Unit] = {}
    for program, entry in truth.get("programs", {}).items():
        for record in entry.get("kernels", {}).values():
            name = record["kernel"]
            unit = units.setdefault((program, name), Unit(program, name))
            measured = {tool for tool, ok in record.get("measured", {}).items() if ok and tool not in failed}
            kernel_facts = facts.get(program, {}).get(name, {})
            # Racecheck only reports shared-memory hazards and synccheck only barriers: without them, nothing.
            if "ncu" in measured and not kernel_facts.get("shared", True) and "racecheck" not in failed:
                measured.add("racecheck")
            if "ncu" in measured and not kernel_facts.get("sync", True) and "synccheck" not in failed:
                measured.add("synccheck")
            unit.measured |= measured
            labels = record.get("labels", {})
            for category in CATEGORY_TOOL:
                if category in GROUPED:
                    groups = labels.get(f"{category}_groups", [])
                else:
                    groups = [[place] for place in labels.get(category, [])]
                for group in groups:
                    item = [_place(p) for p in group]
                    if item not in unit.items[category]:
                        unit.items[category].append(item)
    return units


def _place(text: str) -> tuple[str, int]:
    file, _, line = text.rpartition(":")
    return file, int(line)


def assign(findings: list[Found], units: dict[tuple[str, str], Unit], manifest: dict) -> list[Found]:
    """Puts each kernel finding in the unit of the program that has both its file and its kernel; returns the
    kernel findings that belong to no measured unit."""
    owners: dict[tuple[str, str], str] = {}
    for program in sorted(manifest.get("programs", []), key=lambda p: p["name"]):
        for file in program["files"]:
            for kernel in program["kernels"]:
                owners.setdefault((file, kernel), program["name"])
    unscored = []
    for finding in findings:
        if category_of(finding.code) is None:
            continue
        program = owners.get((finding.file, finding.kernel))
        unit = units.get((program, finding.kernel)) if program else None
        if unit is None:
            unscored.append(finding)
        else:
            unit.findings.append(finding)
    return unscored


# ---------------------------------------------------------------- scoring


@dataclass
class CodeScore:
    code: str
    severity_class: str
    truth: str  # hardware (tool) or hand labels
    tally: Tally = field(default_factory=Tally)
    unscored: int = 0


def statements_for(root: Path, files: set[str]) -> dict[str, Statements]:
    return {f: Statements((root / f).read_text(errors="replace")) for f in files if (root / f).is_file()}


def extents(finding: Found, statements: dict[str, Statements], category: str) -> tuple:
    """The finding's statement(s): a divergence finding on a branch covers the block it heads; its related
    locations are covered too (a race's other access, the other barrier, and for an access shown at the call
    of a header's helper the helper's own expression, where ncu counts it; a related declaration or launch
    has no device counters of its own)."""
    def extent(file: str, first: int, last: int, region: bool) -> tuple[str, tuple[int, int]]:
        if file not in statements:
            return file, (first, last)
        text = statements[file]
        return file, (text.region(first, last) if region else text.extent(first, last))

    own = extent(finding.file, finding.line, finding.end_line, category == "divergence")
    return (own, *(extent(f, a, b, False) for f, a, b in finding.related))


def flagged_places(findings: list[Found], statements: dict[str, Statements], category: str) -> list[tuple]:
    """The findings' extents, one entry per statement flagged (a race: per pair of statements); the related
    places of findings on one statement are pooled (two arrays' conflicts at one call line count once)."""
    extended = {extents(f, statements, category) for f in findings}
    if category in GROUPED:
        return sorted(extended)
    pooled: dict[tuple, set] = defaultdict(set)
    for own, *related in extended:
        pooled[own].update(related)
    return sorted((own, *sorted(related)) for own, related in pooled.items())


def score_hardware(units: dict[tuple[str, str], Unit], root: Path) -> tuple[dict, dict]:
    """Per (code, severity class) and per (category, severity class or 'all'): tallies over the measured kernels."""
    files = {f.file for u in units.values() for f in u.findings}
    files |= {f for u in units.values() for items in u.items.values() for item in items for f, _ in item}
    statements = statements_for(root, files)
    by_code: dict[tuple[str, str], CodeScore] = {}
    by_category: dict[tuple[str, str], Tally] = {}
    for unit in units.values():
        where = f"{unit.program}:{unit.kernel}"
        for category, tool in CATEGORY_TOOL.items():
            relevant = [f for f in unit.findings if category_of(f.code) == category]
            if tool not in unit.measured:
                for f in relevant:
                    by_code.setdefault((f.code, f.severity_class), CodeScore(f.code, f.severity_class, tool)).unscored += 1
                continue
            items = unit.items.get(category, [])
            for severity_class in ("warning/error", "info", "all"):
                chosen = [f for f in relevant if severity_class == "all" or f.severity_class == severity_class]
                flagged = flagged_places(chosen, statements, category)
                tally_places(by_category.setdefault((category, severity_class), Tally()), where, statements,
                             flagged, items)
            for code in sorted({f.code for f in relevant}):
                for severity_class in ("warning/error", "info"):
                    chosen = [f for f in relevant if f.code == code and f.severity_class == severity_class]
                    if not chosen:
                        continue
                    flagged = flagged_places(chosen, statements, category)
                    score = by_code.setdefault((code, severity_class), CodeScore(code, severity_class, tool))
                    tally_places(score.tally, where, statements, flagged, items)
    return by_code, by_category


def score_hand(findings: list[Found], labels: list[dict]) -> tuple[dict, list[Found]]:
    """Codes without a hardware counterpart against the hand labels: (code, class) → Tally, and the findings
    nobody has labelled yet."""
    verdicts = {(lab["file"], lab["line"], lab["code"]): lab for lab in labels}
    scores: dict[tuple[str, str], CodeScore] = {}
    unlabelled = []
    seen = set()
    for finding in findings:
        if category_of(finding.code) is not None:
            continue
        label = verdicts.get((finding.file, finding.line, finding.code))
        score = scores.setdefault((finding.code, finding.severity_class),
                                  CodeScore(finding.code, finding.severity_class, "hand labels"))
        if label is None:
            unlabelled.append(finding)
            score.unscored += 1
            continue
        key = (finding.file, finding.line, finding.code)
        if key in seen:
            continue
        seen.add(key)
        score.tally.flagged += 1
        if label["verdict"] == "true":
            score.tally.flagged_right += 1
            score.tally.truth_found += 1
        else:
            score.tally.false_alarms.append(f"{finding.file}:{finding.line} ({label['reason']})")
    flagged = {(f.file, f.line, f.code) for f in findings}
    for label in labels:  # a problem the analyzer should have reported and did not
        if label["verdict"] == "true" and (label["file"], label["line"], label["code"]) not in flagged:
            score = scores.setdefault((label["code"], "warning/error"),
                                      CodeScore(label["code"], "warning/error", "hand labels"))
            score.tally.misses.append(f"{label['file']}:{label['line']} ({label['reason']})")
    for score in scores.values():
        score.tally.truth_items = score.tally.truth_found + len(score.tally.misses)
    return scores, unlabelled


# ---------------------------------------------------------------- report


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def count_table(findings: list[Found]) -> list[str]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for f in findings:
        project = "llm.c" if f.file.startswith("karpathy+llm.c") else "cuda-samples"
        counts[f.code][f"{f.severity_class} {project}"] += 1
    out = ["| code | warning/error llm.c | warning/error cuda-samples | info llm.c | info cuda-samples |",
           "|---|---:|---:|---:|---:|"]
    for code in sorted(counts):
        c = counts[code]
        out.append(f"| {code} | {c['warning/error llm.c']} | {c['warning/error cuda-samples']} | {c['info llm.c']} | "
                   f"{c['info cuda-samples']} |")
    total = len(findings)
    proven = sum(1 for f in findings if f.proven)
    out.append(f"| all | {proven} warning/error of {total} findings | | | |")
    return out


def render(truth: dict | None, findings: list[Found], by_code: dict, by_category: dict, hand: dict,
           unlabelled: list[Found], unscored: list[Found], units: dict) -> str:
    commit = subprocess.run(["git", "-C", str(HERE), "log", "-1", "--format=%h %cs"], capture_output=True,
                            text=True, check=False).stdout.strip() or "?"
    out = [BEGIN, "## Real-world results (karpathy/llm.c dev/cuda, NVIDIA/cuda-samples)", "",
           f"Analyzer of commit {commit}. Generated by `benchmarks/accuracy/score_realworld.py`.", ""]
    if truth is not None:
        projects = ", ".join(f"{repo} @ {v['commit']}" for repo, v in sorted(truth.get("projects", {}).items()))
        measured = sum(1 for u in units.values() if "ncu" in u.measured)
        canary = truth.get("canary", {})
        out += [f"Measured on {truth.get('gpu') or 'GPU unknown'} ({' '.join(truth.get('ncu') or [])}), generated "
                f"{truth.get('generated', '?')}, {measured} kernels profiled; projects: {projects}. Sanitizer "
                f"canaries: {', '.join(f'{k} ' + ('ok' if v else 'FAILED (not used)') for k, v in canary.items()) or 'none'}.",
                ""]
    out += ["Findings of `cudalens check benchmarks/accuracy/realworld` per code:", "", *count_table(findings), ""]
    if truth is None:
        out += ["No hardware truth yet (run measure_realworld.py on the GPU): only the hand-labelled codes are "
                "scored below.", ""]
    if by_code or hand:
        out += ["Precision per code (a line counts once per kernel), against the truth named:", "",
                "| code | severity | truth | scored lines | confirmed | precision | found / truth items of the category | not scored |",
                "|---|---|---|---:|---:|---:|---:|---:|"]
        for (code, severity_class), score in sorted({**by_code, **hand}.items()):
            t = score.tally
            category = category_of(code)
            items = by_category.get((category, "all"), Tally()).truth_items if category else t.truth_items
            out.append(f"| {code} | {severity_class} | {score.truth} | {t.flagged} | {t.flagged_right} | "
                       f"{_fmt(t.precision)} | {t.truth_found} / {items} | {score.unscored} |")
        out += [""]
    if truth is not None:
        out += ["Per category (hardware truth; recall = truth items any finding of the category matched):", "",
                "| category | truth items | precision W/E | recall W/E | precision info | precision all | recall all |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for category in CATEGORY_TOOL:
            w, i, a = (by_category.get((category, c), Tally()) for c in ("warning/error", "info", "all"))
            out.append(f"| {category} | {a.truth_items} | {_fmt(w.precision)} | {_fmt(w.recall)} | {_fmt(i.precision)} | "
                       f"{_fmt(a.precision)} | {_fmt(a.recall)} |")
        proven = [s for s in by_code.values() if s.severity_class == "warning/error"]
        infos = [s for s in by_code.values() if s.severity_class == "info"]
        wf, wr = sum(s.tally.flagged for s in proven), sum(s.tally.flagged_right for s in proven)
        nf, nr = sum(s.tally.flagged for s in infos), sum(s.tally.flagged_right for s in infos)
        out += ["", f"Overall (hardware truth): warning/error precision {_fmt(wr / wf if wf else None)} ({wr}/{wf}); "
                f"info precision {_fmt(nr / nf if nf else None)} ({nr}/{nf}); of the lines the hardware confirmed, "
                f"{wr} were flagged warning/error and {nr} info. "
                f"{len(unscored)} kernel findings are on kernels nobody measured.", ""]
    for (code, severity_class), score in sorted({**by_code, **hand}.items()):
        alarms = score.tally.false_alarms
        if severity_class == "warning/error" and alarms:
            out.append(f"- {code} false alarms: " + "; ".join(alarms[:40]) + (" …" if len(alarms) > 40 else ""))
    for category in CATEGORY_TOOL:
        misses = by_category.get((category, "all"), Tally()).misses
        if misses:
            out.append(f"- {category} missed: " + "; ".join(misses[:40]) + (" …" if len(misses) > 40 else ""))
    if unlabelled:
        out.append("- not labelled yet: " + "; ".join(f"{f.code} {f.file}:{f.line}" for f in unlabelled[:40]))
    out += ["", END]
    return "\n".join(out)


def replace_section(path: Path, section: str) -> None:
    text = path.read_text() if path.is_file() else ""
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--truth", type=Path, default=TRUTH, help="measure_realworld.py's truth.json")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--findings", type=Path, help="a saved `cudalens check --format json` (default: run it)")
    parser.add_argument("--write", action="append", type=Path, default=[],
                        help="replace the real-world section of this Markdown file (repeatable)")
    args = parser.parse_args(argv)
    try:
        manifest = json.loads((args.root / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        print(f"score_realworld: {args.root}/manifest.json: {exc} (run fetch_realworld.py)", file=sys.stderr)
        return 2
    findings = parse_findings(json.loads(args.findings.read_text()), args.root) if args.findings else run_analyzer(args.root)
    truth = json.loads(args.truth.read_text()) if args.truth.is_file() else None
    labels = json.loads(args.labels.read_text())["labels"] if args.labels.is_file() else []
    units = units_from_truth(truth, manifest) if truth else {}
    unscored = assign(findings, units, manifest)
    by_code, by_category = score_hardware(units, args.root) if truth else ({}, {})
    hand, unlabelled = score_hand(findings, labels)
    text = render(truth, findings, by_code, by_category, hand, unlabelled, unscored, units)
    print(text)
    for target in args.write:
        replace_section(target, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
