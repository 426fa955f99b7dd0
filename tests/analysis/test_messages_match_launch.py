"""No finding cites a thread id, lane count, word or block that the launch it is about cannot have: every rule
over the rule fixtures, the CLI fixtures, the examples and the accuracy corpus (and its public kernels when
fetched), each message's numbers checked against the block in its evidence, and that block against the
kernel's launches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudalens.analysis.api import analyze_text
from cudalens.analysis.config import AnalysisConfig
from cudalens.workspace.includes import DiskIncludes

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for folder in ("tests/analysis/fixtures", "tests/cli/fixtures", "examples",
                                  "benchmarks/accuracy/kernels", "benchmarks/accuracy/public")
                 for p in (ROOT / folder).glob("*") if p.suffix in (".cu", ".cuh", ".py"))
_BLOCK = re.compile(r"(\d+)×(\d+)×(\d+)")


def _shape(text: str) -> tuple[int, int, int]:
    m = _BLOCK.fullmatch(text)
    assert m, text
    return int(m[1]), int(m[2]), int(m[3])


def problems(report) -> list[str]:
    """What is wrong with each finding's numbers, as lines (empty when all agree with the launch)."""
    launches = {k.name: {s.block for s in k.launch_sites} for k in report.kernels}
    out = []
    for f in report.findings:
        evidence = f.evidence_dict()
        if "block" not in evidence or f.kernel is None:
            continue
        where = f"{f.path}:{f.line} {f.code} {f.message}"
        block = _shape(evidence["block"])
        threads = block[0] * block[1] * block[2]
        assumed = dict(evidence.get("assumed", {}))
        known = launches.get(f.kernel, set())
        if known and None not in known and not any(k.startswith("block") for k in assumed) \
                and "holds_for_blocks" not in evidence:
            if block not in known:
                out.append(f"{where}: evidence block {block} is none of the launches' {sorted(known)}")
        for m in re.finditer(r"\bthreads? (\d+)\b", f.message):
            if int(m[1]) >= threads:
                out.append(f"{where}: thread {m[1]} in a block of {threads}")
        for m in re.finditer(r"(\d+) of (\d+) (?:\w+ )?lanes", f.message):
            if not int(m[1]) <= int(m[2]) <= min(32, threads):
                out.append(f"{where}: {m[0]} with {threads} threads")
        for m in re.finditer(r"(\d+) of (\d+) threads", f.message):
            if not int(m[1]) <= int(m[2]) <= threads:
                out.append(f"{where}: {m[0]} in a block of {threads}")
        for key in ("thread_a", "thread_b"):
            if key in evidence and not 0 <= evidence[key] < threads:
                out.append(f"{where}: {key} = {evidence[key]} in a block of {threads}")
        mentioned = {_shape(m[0]) for m in _BLOCK.finditer(f.message)}
        allowed = {block} | known | {_shape(s) for s in evidence.get("holds_for_blocks", "").split(" and ") if s}
        if mentioned - allowed and "assuming" not in f.message:
            out.append(f"{where}: cites blocks {sorted(mentioned - allowed)} of no launch")
    return out


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_message_numbers_fit_the_launch(path: Path) -> None:
    report = analyze_text(str(path), path.read_text(errors="replace"), AnalysisConfig(min_severity="hint"),
                          DiskIncludes())
    assert problems(report) == []


def test_the_check_catches_a_thread_the_launch_cannot_have() -> None:
    source = ("__global__ void k(const float* in, float* out) { __shared__ float s[256];\n"
              "  s[threadIdx.x] = in[threadIdx.x];\n  out[threadIdx.x] = s[(threadIdx.x + 1) % 256]; }\n"
              "void host(float* a, float* b) { k<<<1, 64>>>(a, b); }\n")
    report = analyze_text("k.cu", source)
    [race] = [f for f in report.findings if f.code == "CL303"]
    assert race.evidence_dict()["block"] == "64×1×1" and problems(report) == []
    forged = race.__class__(**{**race.__dict__, "message": re.sub(r"thread \d+ ", "thread 100 ", race.message, count=1)})
    report.findings = [forged]
    assert problems(report), race.message
