"""compute-sanitizer (memcheck, racecheck, synccheck) over a file's profile target, its text output parsed
into `SanitizerIssue`s, and CL905 findings at the lines it names."""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from cudalens.analysis.findings import Finding, Related, Severity
from cudalens.analysis.rules.sanitizer_error import SanitizerError
from cudalens.profiler import processes
from cudalens.profiler.ncu import locate
from cudalens.profiler.ncu.line_map import LineMapper, line_span
from cudalens.profiler.ncu.profile import target_env
from cudalens.worker.child.results import SanitizerIssue, SanitizerResult
from cudalens.worker.jobs import child_command

TOOLS = ("memcheck", "racecheck", "synccheck")

_PREFIX = re.compile(r"^=+ ?")
# "in /path/file.cu:12" (new: kernel before, "+0x.." offset) or "in /path/file.cu:12:kernel(int*)" (old)
_WHERE = re.compile(r"\bin\s+(?P<file>[^\s:]+(?:\.[A-Za-z]+)?):(?P<line>\d+)(?::(?P<kernel>\S.*?))?(?:\s+\[|\s*$)")
_AT_KERNEL = re.compile(r"\bat\s+(?P<kernel>[A-Za-z_~][^+]*?)\+0x[0-9a-fA-F]+")
_THREAD = re.compile(r"thread \((\d+),(\d+),(\d+)\)")
_BLOCK = re.compile(r"block \((\d+),(\d+),(\d+)\)")
_HAZARDS = re.compile(r"\[(\d+) hazards?\]")
# memcheck/synccheck/initcheck end with the first; racecheck with the second, whose errors are the count
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+) errors?|RACECHECK SUMMARY:\s*\d+ hazards? displayed \((\d+) errors?")
_SKIP = ("COMPUTE-SANITIZER", "CUDA-MEMCHECK", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "Target application returned")


def sanitizer_command(tool: str, sanitizer: str, target: list[str]) -> list[str]:
    cmd = [sanitizer, "--tool", tool, "--print-limit", "100", "--target-processes", "application-only"]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "analysis"]
    return cmd + target


def parse(tool: str, text: str) -> tuple[list[SanitizerIssue], int | None]:
    """The issues in a compute-sanitizer log and its `ERROR SUMMARY` count (None when absent)."""
    issues: list[dict] = []
    count: int | None = None
    for raw in text.splitlines():
        if not raw.startswith("="):
            continue
        body = _PREFIX.sub("", raw, count=1)
        if m := _SUMMARY.search(body):
            count = int(m.group(1) or m.group(2))
            continue
        if not body.strip() or body.strip().startswith(_SKIP):
            continue
        indented = body.startswith("  ")
        if not indented:
            issues.append({"message": body.strip(), "locations": [], "thread": None, "block": None, "count": 1})
            _locate(issues[-1], body)
            continue
        if not issues or "Host Frame" in body or "Saved host backtrace" in body:
            continue
        _locate(issues[-1], body)
    return [_issue(tool, i) for i in issues], count


def _locate(issue: dict, body: str) -> None:
    if (m := _WHERE.search(body)) and "Host Frame" not in body:
        kernel = m.group("kernel")
        if kernel is None and (k := _AT_KERNEL.search(body)):
            kernel = k.group("kernel")
        issue["locations"].append((m.group("file"), int(m.group("line")), (kernel or "").strip() or None))
    if issue["thread"] is None and (t := _THREAD.search(body)):
        issue["thread"] = tuple(int(x) for x in t.groups())
    if issue["block"] is None and (b := _BLOCK.search(body)):
        issue["block"] = tuple(int(x) for x in b.groups())
    if h := _HAZARDS.search(body):
        issue["count"] = int(h.group(1))


def _kind(message: str) -> str:
    low = message.lower()
    if m := re.search(r"invalid (__\w+__|\w+) (read|write|atomic)", low):
        return f"invalid-{m.group(1).strip('_')}-{m.group(2)}"
    for needle, kind in (
        ("misaligned", "misaligned-access"), ("race reported", "race"), ("hazard", "race"),
        ("barrier error", "barrier"), ("divergent thread", "barrier"), ("program hit", "api-error"),
        ("leak", "leak"), ("uninitialized", "uninitialized-read"), ("out of bounds", "out-of-bounds"),
    ):
        if needle in low:
            return kind
    return "other"


def _issue(tool: str, raw: dict) -> SanitizerIssue:
    locs = raw["locations"]
    first = locs[0] if locs else (None, None, None)
    other = locs[1] if len(locs) > 1 else (None, None, None)
    return SanitizerIssue(
        tool=tool, kind=_kind(raw["message"]), message=raw["message"], file=first[0], line=first[1],
        kernel=first[2], thread=raw["thread"], block=raw["block"], other_file=other[0], other_line=other[1],
        count=raw["count"],
    )


def run_sanitizer(
    path: str, tool: str = "memcheck", *, reference: str | None = None, python: str = sys.executable,
    timeout: float = 300.0, small: bool = True,
) -> SanitizerResult:
    """compute-sanitizer `tool` over one call of the file's candidate, time-boxed to `timeout` s. With `small`
    (the default) on the smallest inputs its reference accepts (worker/child/lib/small_inputs.py): every access
    is instrumented, and racecheck on a full-size 4096² matmul ran past 300 s. The result says what was run."""
    if tool not in TOOLS:
        return SanitizerResult(tool, error=f"unknown sanitizer tool {tool!r} (one of {', '.join(TOOLS)})")
    sanitizer = locate.find_sanitizer()
    if sanitizer is None:
        return SanitizerResult(tool, error="compute-sanitizer not found: install the CUDA toolkit")
    text = Path(path).read_text(encoding="utf-8", errors="replace") if Path(path).is_file() else ""
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cudalens-sanitizer-") as tmp:
        payload = Path(tmp) / "payload.json"
        payload.write_text(json.dumps({"path": str(Path(path).resolve()), "reference": reference, "reps": 1,
                                       "inputs": "small" if small else "full"}))
        run = processes.run(
            sanitizer_command(tool, sanitizer, child_command(python, "jobs.profile_target", str(payload))),
            timeout=timeout, env=target_env(path, text),
        )
    seconds = time.monotonic() - began
    inputs = ran_on(run.output) or ("the smallest inputs (not reached)" if small else "full size")
    what = {"inputs": inputs, "seconds": seconds, "timeout_s": timeout}
    if run.timed_out:
        return SanitizerResult(tool, error=f"compute-sanitizer {tool} exceeded {timeout:.0f} s", **what)
    issues, count = parse(tool, run.output)
    issues = [_in_build_dir(issue, run.output) for issue in issues]
    return SanitizerResult(tool, tuple(issues), count, run.returncode, run.output[-4000:], **what)


_INPUTS = re.compile(r"cudalens-inputs: (\{.*\})\s*$", re.M)


def ran_on(output: str) -> str:
    """What the target announced it ran on: `scaled N 4096→128 (...), inputs [[128, 128], [128, 128]]`."""
    found = _INPUTS.findall(output)
    if not found:
        return ""
    try:
        data = json.loads(found[-1])
    except ValueError:
        return ""
    return f"{data.get('how', '')}, inputs {data.get('shapes', [])}"


_BUILD_DIR = re.compile(r"cudalens-build-dir: (.+?)\s*$", re.M)


def _in_build_dir(issue: SanitizerIssue, output: str) -> SanitizerIssue:
    """Give a bare generated file name (load_inline's `cuda.cu`) the folder the target announced, so its lines
    can be mapped back to the user's file by content."""
    def where(name: str | None) -> str | None:
        if not name or Path(name).is_absolute():
            return name
        for folder in _BUILD_DIR.findall(output):
            if (Path(folder) / name).is_file():
                return str(Path(folder) / name)
        return name

    return replace(issue, file=where(issue.file), other_file=where(issue.other_file))


def sanitizer_findings(path: str, text: str, issues: Iterable[SanitizerIssue], files: dict[str, str] | None = None) -> list[Finding]:
    """CL905 at each issue's line in `path` (issues elsewhere, e.g. in torch, are left out)."""
    mapper = LineMapper(path, text, files)
    source = text.splitlines()
    out: list[Finding] = []
    for issue in issues:
        line = mapper.map(issue.file, issue.line) if issue.line else None
        if not line:
            continue
        related: tuple[Related, ...] = ()
        if issue.other_line and (other := mapper.map(issue.other_file, issue.other_line)):
            related = (Related(line_span(source, other), "the other access of the race"),)
        where = ""
        if issue.thread and issue.block:
            where = " (thread ({},{},{}) in block ({},{},{}))".format(*issue.thread, *issue.block)
        hazards = f" [{issue.count} hazards]" if issue.count > 1 else ""
        out.append(Finding(
            path, SanitizerError.code, SanitizerError.name, Severity.ERROR, f"compute-sanitizer {issue.tool}: {issue.message}{where}{hazards}",
            line_span(source, line), kernel=issue.kernel, related=related,
            evidence=(("tool", issue.tool), ("kind", issue.kind)),
        ))
    return out
