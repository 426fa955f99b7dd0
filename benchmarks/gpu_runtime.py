"""The whole run-time GPU check in one script (about 3–6 minutes on an H200), printing a table.

    python benchmarks/gpu_runtime.py [--json out.json]

Builds the test extensions in parallel (cold load_inline builds overlap), then: KernelBench inline-CUDA
solutions right and wrong, a .cu kernel with its reference and its timing vs PyTorch, an illegal memory
access (in a child process) as CL902, ncu line attribution for an uncoalesced transpose and a bank-conflicted
tile (CL904 on the right lines; also the save→per-line-hints time), compute-sanitizer racecheck and memcheck
(CL905), and `validate` over those files. Exit status 0 when every check passed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "runtime" / "data"
ROWS: list[tuple[str, bool, float, str]] = []


def check(name: str, fn: Callable[[], tuple[bool, str]]) -> None:
    start = time.monotonic()
    try:
        ok, detail = fn()
    except Exception as exc:  # a broken check is a failed row, never a stopped benchmark
        ok, detail = False, f"{type(exc).__name__}: {exc}"
    ROWS.append((name, ok, time.monotonic() - start, detail))
    print(f"{'PASS' if ok else 'FAIL'} {name} ({ROWS[-1][2]:.1f} s): {detail}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()

    import torch

    from cudalens.profiler.ncu import locate
    from cudalens.profiler.ncu.line_hints import line_findings
    from cudalens.profiler.ncu.profile import ProfileRequest, profile_file
    from cudalens.profiler.prebuild import prebuild
    from cudalens.profiler.sanitizer import run_sanitizer, sanitizer_findings
    from cudalens.profiler.validate import summarize, validate_file
    from cudalens.worker.child.jobs import test_job

    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"GPU {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none'}, "
          f"ncu {locate.find_ncu()}, compute-sanitizer {locate.find_sanitizer()}", file=sys.stderr)
    files = ["kb_relu_cuda_right.py", "kb_relu_cuda_wrong.py", "transpose.cu", "bank_conflict.cu",
             "illegal_access.cu", "shared_race.cu"]

    def builds() -> tuple[bool, str]:
        done = prebuild([str(DATA / f) for f in files])
        slowest = max(b.seconds for b in done)
        bad = [f"{Path(b.path).name}: {b.message}" for b in done if not b.ok]
        return not bad, f"{len(done)} extensions, slowest cold build {slowest:.0f} s" + (f"; {bad}" if bad else "")

    def kernelbench() -> tuple[bool, str]:
        right = test_job.run({"path": str(DATA / "kb_relu_cuda_right.py")})["test"]
        start = time.monotonic()
        again = test_job.run({"path": str(DATA / "kb_relu_cuda_right.py")})["test"]
        warm = time.monotonic() - start
        wrong = test_job.run({"path": str(DATA / "kb_relu_cuda_wrong.py")})["test"]
        reason = wrong["trials"][0]["outputs"][0]["reason"] if wrong["trials"] and wrong["trials"][0]["outputs"] else None
        ok = right["status"] == again["status"] == "passed" and wrong["status"] == "failed"
        return ok, f"right {right['status']}, wrong {wrong['status']} ({reason}); warm verdict {warm:.2f} s (goal ≤ 2 s)"

    def cu_and_timing() -> tuple[bool, str]:
        out = test_job.run({"path": str(DATA / "transpose.cu"), "time": True, "budget_ms": 50})
        t = out["timing"] or {}
        ok = out["test"]["status"] == "passed" and bool(t)
        detail = f"test {out['test']['status']}"
        if t:
            detail += (f"; candidate {t['candidate']['median_ms']:.4f} ms, eager {t['reference']['median_ms']:.4f} ms, "
                       f"speedup {t['speedup']:.2f}×, n={len(t['candidate']['samples_ms'])}, warnings {t['candidate']['warnings']}")
        return ok, detail

    def illegal() -> tuple[bool, str]:
        code = ("import argparse; from cudalens.cli import test_cmd; p = argparse.ArgumentParser(); "
                "test_cmd.add_arguments(p); "
                f"raise SystemExit(test_cmd.run(p.parse_args([{str(DATA / 'illegal_access.cu')!r}, '--format', 'json'])))")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        data = json.loads(proc.stdout or "{}")
        codes = [f["code"] for f in data.get("findings", [])]
        return codes == ["CL902"], f"exit {proc.returncode}, findings {codes}: " + (data.get("findings") or [{}])[0].get("message", "")[:120]

    def ncu_line(name: str, needle: str, line: int) -> Callable[[], tuple[bool, str]]:
        def run() -> tuple[bool, str]:
            path = DATA / name
            start = time.monotonic()
            profile = profile_file(ProfileRequest(str(path), use_cache=False))
            took = time.monotonic() - start
            if profile.error:
                return False, profile.error
            found = [f for f in line_findings(str(path), path.read_text(), profile.lines) if needle in f.message]
            lines = [f.line for f in found]
            return lines == [line], (f"CL904 on lines {lines} (want [{line}]) via {profile.source}, "
                                     f"save→hints {took:.1f} s (goal ≤ 6 s); " + (found[0].message[:90] if found else ""))
        return run

    def sanitizers() -> tuple[bool, str]:
        race_path, oob_path = DATA / "shared_race.cu", DATA / "illegal_access.cu"
        race = run_sanitizer(str(race_path), "racecheck")
        oob = run_sanitizer(str(oob_path), "memcheck")
        race_lines = sorted({f.line for f in sanitizer_findings(str(race_path), race_path.read_text(), race.issues)})
        oob_lines = sorted({f.line for f in sanitizer_findings(str(oob_path), oob_path.read_text(), oob.issues)})
        ok = bool(set(race_lines) & {7, 8}) and 6 in oob_lines
        return ok, f"racecheck lines {race_lines} (want 7/8), memcheck lines {oob_lines} (want 6) {race.error or ''}{oob.error or ''}"

    def validate() -> tuple[bool, str]:
        report = summarize([validate_file(str(DATA / n)) for n in ("transpose.cu", "bank_conflict.cu", "shared_race.cu")])
        print(report.table(), file=sys.stderr)
        t = {s.category: s for s in report.totals}
        ok = t["coalescing"].found >= 1 and t["bank-conflicts"].found >= 1 and t["races"].found >= 1
        return ok, "; ".join(f"{c}: P={s.precision} R={s.recall}" for c, s in t.items())

    check("parallel cold builds", builds)
    check("KernelBench inline CUDA right/wrong", kernelbench)
    check(".cu + reference, timing vs PyTorch", cu_and_timing)
    check("illegal memory access → CL902", illegal)
    check("ncu uncoalesced transpose → CL904 line 8", ncu_line("transpose.cu", "sectors", 8))
    check("ncu bank-conflicted tile → CL904 line 12", ncu_line("bank_conflict.cu", "bank-conflict", 12))
    check("compute-sanitizer racecheck/memcheck → CL905", sanitizers)
    check("validate on the corpus", validate)

    width = max(len(r[0]) for r in ROWS)
    print(f"{'check'.ljust(width)}  result  seconds  detail")
    for name, ok, seconds, detail in ROWS:
        print(f"{name.ljust(width)}  {'PASS' if ok else 'FAIL':6}  {seconds:7.1f}  {detail}")
    if args.json:
        Path(args.json).write_text(json.dumps([dict(zip(("check", "ok", "seconds", "detail"), r, strict=True)) for r in ROWS], indent=2))
    return 0 if all(r[1] for r in ROWS) else 1


if __name__ == "__main__":
    sys.exit(main())
