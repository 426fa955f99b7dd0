"""Measure the real-world suite on the GPU: what the hardware sees on each line of llm.c's and the samples' kernels.

Reads `realworld/manifest.json` (written by fetch_realworld.py) and, for every program:
1. builds it with `nvcc -lineinfo -arch=sm_90` and the project's own flags (all programs in parallel);
2. for every kernel a run launches (a run = one command line, e.g. `./layernorm_forward 3`): one ncu process
   that profiles exactly one launch of that kernel -- `--kernel-name regex:` on its name, `--launch-skip` to
   the 256-thread launch the manifest names, `--launch-count 1`, `--replay-mode kernel`, `--clock-control
   none`, `--section SourceCounters` -- and, when the kernel (or a function it calls) touches shared memory or
   synchronises, one compute-sanitizer racecheck / synccheck process on that same launch (`--kernel-name
   kns=`, `--launch-skip`, `--launch-count 1`). Template kernels are measured once per run (each run has its
   own instantiation); other kernels once per program;
3. labels each line the way measure.py labels the corpus (same thresholds, same functions): uncoalesced,
   bank_conflict, divergence from the source counters; race / sync from the sanitizers.

ncu processes run several at a time (`--ncu-jobs`): Nsight Compute serialises the profiled kernels through its
lock file, so the counters of one never overlap another's, while the programs' host work (CPU references,
cuBLAS set-up) runs alongside. Source counters are instruction counts, not timings.

Everything that finishes is appended to `OUT/results.jsonl` at once; `OUT/truth.json` and `OUT/raw.tar.gz`
(every tool's log, the per-instruction counters) are written at the end, at `--deadline` (running processes
are stopped) or on SIGTERM. `--resume OLD_OUT` skips what an earlier call finished; `--only` picks programs
(substrings of their names), `--kernels FILE` kernels by name; `--dry-run` builds and writes the commands it would run (jobs.txt) without a GPU.

    python3 benchmarks/accuracy/measure_realworld.py --out "$OUT" --jobs 16

Standard library only (Python 3.10+); needs nvcc, ncu and compute-sanitizer on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure  # a sibling module: the corpus measurement's labelling and report readers

HERE = Path(__file__).resolve().parent
ROOT = HERE / "realworld"
RAW_LOG_LIMIT = 300_000  # characters of one tool log kept in the archive
# ncu and compute-sanitizer talk to the program they launch over local ports, both from 49152 on, trying 64
# (ncu) and 10 (sanitizer) ports: sixteen at once would run out. Each running tool gets its own range.
PORT_BASE, PORTS_PER_TOOL = 50000, 10
MAX_RETURNED_FILE = 15 * 2**20  # the device machine brings back files of up to 16 MiB
HEAVY = ("llm.c/attention_backward", "llm.c/attention_forward", "llm.c/matmul_forward", "llm.c/matmul_backward",
         "llm.c/trimat_forward", "cuda-samples/FDTD3d")  # long CPU references or naive kernels: measured last


# The sanitizers' kernel filter, checked on kernels of ours whose answer is known (measured on the H200 for the
# corpus): a filter that matched nothing would read as "no race" everywhere. Run first; truth.json says how
# they came out, and score_realworld.py does not use a tool whose canary failed.
CANARY = {
    "name": "canary/races",
    "folder": str(HERE / "kernels"),
    "sources": ["races.cu"],
    "include_dirs": [],
    "flags": ["-O3"],
    "files": ["races.cu"],
    "kernels": {},
    "skip_reason": "",
    "runs": [],
}
CANARY_CHECKS = (  # (tool, kernel, whether it must report something)
    ("racecheck", "tile_transpose_unsynced", True),
    ("racecheck", "tile_transpose_synced", False),
    ("synccheck", "sync_in_uneven_loop", True),
)


@dataclass(frozen=True)
class Job:
    program: str
    key: str  # the kernel's key in truth.json: its name, or `name [argv]` for a template's instantiation
    kernel: str
    argv: tuple[str, ...]
    skip: int
    tool: str  # ncu | racecheck | synccheck

    @property
    def ident(self) -> str:
        return f"{self.tool} {self.program} {self.key}"

    @property
    def slug(self) -> str:
        return re.sub(r"[^\w.-]+", "_", f"{self.program}.{self.key}.{self.tool}")


def log(message: str) -> None:
    measure.log(message)


# ---------------------------------------------------------------- plan


def plan(manifest: dict, only: list[str] | None) -> tuple[list[dict], list[Job]]:
    """The programs to build and the measurement jobs, cheap programs first (ncu's lock is the bottleneck)."""
    programs = [p for p in manifest["programs"] if not p["skip_reason"]]
    if only:
        programs = [p for p in programs if any(o in p["name"] for o in only)]
    programs.sort(key=lambda p: (p["name"] in HEAVY, p["name"]))
    programs.insert(0, CANARY)
    jobs = [Job(CANARY["name"], kernel, kernel, (), 0, tool) for tool, kernel, _ in CANARY_CHECKS]
    for program in programs[1:]:
        seen: set[str] = set()
        for run in program["runs"]:
            for launched in run["kernels"]:
                name = launched["name"]
                facts = program["kernels"].get(name, {})
                key = f"{name} [{' '.join(run['argv'])}]" if facts.get("template") and len(program["runs"]) > 1 else name
                if key in seen:
                    continue
                seen.add(key)
                tools = ["ncu"] + [t for t, needed in (("racecheck", facts.get("shared", True)),
                                                      ("synccheck", facts.get("sync", True))) if needed]
                jobs += [Job(program["name"], key, name, tuple(run["argv"]), launched["skip"], t) for t in tools]
    return programs, jobs


# ---------------------------------------------------------------- build


def build_command(program: dict, root: Path, binary: Path, arch: str, extra: list[str]) -> list[str]:
    folder = root / program["folder"]
    flags = [f for f in program["flags"] if not f.startswith("-l")]
    libraries = [f for f in program["flags"] if f.startswith("-l")]
    includes = [arg for d in program["include_dirs"] for arg in ("-I", str(root / d))]
    sources = [str(folder / s) for s in program["sources"]]
    return ["nvcc", "-lineinfo", f"-arch={arch}", *flags, "-I", str(folder), *includes, *extra,
            "-o", str(binary), *sources, *libraries]


def build(program: dict, root: Path, work: Path, arch: str, extra: list[str], timeout: float
          ) -> tuple[Path | None, str, float]:
    binary = work / "build" / program["name"].replace("/", "+")
    binary.parent.mkdir(parents=True, exist_ok=True)
    cmd = build_command(program, root, binary, arch, extra)
    started = time.monotonic()
    code, out = measure.run(cmd, timeout=timeout)
    return (binary if code == 0 else None), shlex.join(cmd) + "\n" + out, time.monotonic() - started


# ---------------------------------------------------------------- tools


def kernel_regex(name: str) -> str:
    """ncu `--kernel-name` matching the kernel as a whole identifier, with or without template arguments and
    parameters (`--kernel-name-base function` keeps `reduce4<float, 256u>`); as profiler/ncu/metrics.py does."""
    return f"regex:(^|[^A-Za-z0-9_]){re.escape(name)}($|[^A-Za-z0-9_])"


def ncu_command(job: Job, binary: Path, report: Path) -> list[str]:
    return [
        "ncu", "--target-processes", "application-only", "--replay-mode", "kernel", "--clock-control", "none",
        "--kernel-name-base", "function", "--kernel-name", kernel_regex(job.kernel),
        "--launch-skip", str(job.skip), "--launch-count", "1",
        "--section", "SourceCounters", "--metrics", ",".join((*measure.KERNEL_METRICS, *measure.LAUNCH_METRICS)),
        "--import-source", "no", "--print-summary", "none", "-f", "-o", str(report.with_suffix("")),
        str(binary), *job.argv,
    ]


def sanitizer_command(job: Job, binary: Path, filter_option: str, prefixed: bool = True) -> list[str]:
    # `kns=` is a substring of the kernel's mangled name; the Itanium length prefix (`7reduce0`) makes it the
    # whole identifier, so `layernorm_backward_kernel1` does not also pick `..._kernel10`. (`prefixed=False`
    # is the fallback for a sanitizer that matches demangled names: calibrate() picks.)
    name = f"{len(job.kernel)}{job.kernel}" if prefixed else job.kernel
    cmd = ["compute-sanitizer", "--tool", job.tool, "--target-processes", "application-only", "--print-limit", "2000",
           filter_option, f"kns={name}", "--launch-skip", str(job.skip), "--launch-count", "1"]
    if job.tool == "racecheck":
        cmd += ["--racecheck-report", "analysis"]
    return [*cmd, str(binary), *job.argv]


def sanitizer_filter_option() -> str:
    """`--kernel-name` (compute-sanitizer 2022.2 on), else the older `--filter`: the same key=value syntax."""
    _, out = measure.run(["compute-sanitizer", "--help"], timeout=60)
    return "--kernel-name" if "--kernel-name" in out or "--filter" not in out else "--filter"


# ---------------------------------------------------------------- one job


class Runner:
    """Runs jobs, keeps their results (appended to results.jsonl as each finishes) and their raw logs."""

    def __init__(self, args, programs: dict[str, dict], binaries: dict[str, Path | None], started: float) -> None:
        self.args = args
        self.programs = programs
        self.binaries = binaries
        self.started = started
        self.lock = threading.Lock()
        self.report_lock = threading.Lock()  # nothing says ncu_report may be used from several threads
        self.results_file = (args.out / "results.jsonl").open("a")
        self.raw = args.work / "raw"
        self.raw.mkdir(parents=True, exist_ok=True)
        self.ncu_report = None if args.dry_run else measure.import_ncu_report()
        self.filter_option = "--kernel-name" if args.dry_run else sanitizer_filter_option()
        self.prefixed = True
        self.calibrated = threading.Event()  # sanitizer jobs wait for calibrate()
        self.children: set[subprocess.Popen] = set()
        self.stopping = False
        self.ports: queue.Queue[int] = queue.Queue()
        for slot in range(args.jobs + args.ncu_jobs + 2):
            self.ports.put(PORT_BASE + slot * PORTS_PER_TOOL)

    def remaining(self) -> float:
        return self.args.deadline - (time.monotonic() - self.started)

    def execute(self, cmd: list[str], cwd: Path) -> tuple[int, str, float]:
        """Runs a tool in its own process group, stopped at the job timeout or the deadline."""
        timeout = max(1.0, min(self.args.timeout, self.remaining()))
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "4"))
        port = self.ports.get()
        if Path(cmd[0]).name in ("ncu", "compute-sanitizer"):
            cmd = [cmd[0], "--port", str(port), "--max-connections", str(PORTS_PER_TOOL), *cmd[1:]]
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace", env=env,
                                    start_new_session=True)
        except OSError as exc:
            self.ports.put(port)
            return 127, f"[measure_realworld] {exc}", 0.0
        with self.lock:
            self.children.add(proc)
        try:
            out, _ = proc.communicate(timeout=timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            _kill(proc)
            out, _ = proc.communicate()
            code, out = 124, (out or "") + f"\n[measure_realworld] stopped after {timeout:.0f}s"
        finally:
            with self.lock:
                self.children.discard(proc)
            self.ports.put(port)
        return code, f"[measure_realworld] ran with --port {port}\n" + (out or ""), time.monotonic() - t0

    def stop_children(self) -> None:
        self.stopping = True
        with self.lock:
            for proc in list(self.children):
                _kill(proc)

    def keep_log(self, job: Job, text: str, suffix: str = "txt") -> None:
        if len(text) > RAW_LOG_LIMIT:
            text = text[: RAW_LOG_LIMIT // 2] + "\n[... cut ...]\n" + text[-RAW_LOG_LIMIT // 2 :]
        (self.raw / f"{job.slug}.{suffix}").write_text(text)

    def record(self, result: dict) -> None:
        with self.lock:
            self.results_file.write(json.dumps(result) + "\n")
            self.results_file.flush()

    def run_job(self, job: Job) -> dict | None:
        if self.stopping or time.monotonic() - self.started > self.args.budget:
            return None
        try:
            return self._run_job(job)
        except Exception as exc:  # one job's surprise must not cost the others
            log(f"{job.ident}: {exc!r}")
            self.record({**asdict(job), "argv": list(job.argv), "rc": -1, "seconds": 0.0, "error": repr(exc)})
            return None

    def _run_job(self, job: Job) -> dict | None:
        binary = self.binaries.get(job.program)
        if binary is None:
            return None
        result = {**asdict(job), "argv": list(job.argv)}
        if job.tool == "ncu":
            result.update(self.profile(job, binary))
            if result.get("error") == "no launch profiled" and job.skip > 0 and not self.stopping:
                # Fewer launches than the manifest expected (a launch site in an untaken branch): take the first.
                retry = Job(job.program, job.key, job.kernel, job.argv, 0, job.tool)
                result = {**asdict(retry), "argv": list(job.argv), "skip_planned": job.skip, **self.profile(retry, binary)}
        else:
            result.update(self.sanitize(job, binary))
        if self.stopping and (result.get("error") or result.get("rc") not in (0, 1)):
            return None  # cut by the deadline (killed): not a measurement, and --resume runs it again
        self.record(result)
        log(f"{job.ident}: {result.get('error') or 'ok'} ({result['seconds']:.0f}s)")
        return result

    def profile(self, job: Job, binary: Path) -> dict:
        report = self.args.work / "reports" / f"{job.slug}.ncu-rep"
        report.parent.mkdir(parents=True, exist_ok=True)
        cmd = ncu_command(job, binary, report)
        if self.args.dry_run:
            return self.dry(cmd)
        report.unlink(missing_ok=True)
        code, out, seconds = self.execute(cmd, binary.parent)
        self.keep_log(job, shlex.join(cmd) + "\n" + out)
        outcome: dict = {"rc": code, "seconds": round(seconds, 1)}
        if not report.exists():
            nothing = code == 0 or "No kernels were profiled" in out
            outcome["error"] = "no launch profiled" if nothing and code != 124 else f"ncu exit {code}"
            return outcome
        names = self.file_names(job.program)
        try:
            with self.report_lock:
                profiles = measure.read_report(self.ncu_report, report, names) if self.ncu_report else []
            if not any(p.instructions for p in profiles):
                page = measure.run(["ncu", "-i", str(report), "--page", "source", "--csv", "--print-source", "cuda"],
                                   timeout=120)[1]
                self.keep_log(job, page, "source.csv")
                profiles = measure.read_source_csv(page, names)
                outcome["reader"] = "csv"
        except Exception as exc:  # one unreadable report must not cost the rest of the suite
            outcome["error"] = f"report unreadable: {exc!r}"
            return outcome
        if not profiles:
            outcome["error"] = "no launch profiled"
            return outcome
        prof = profiles[0]
        relative = self.relative_names(job.program)
        labelled = measure.label_kernel(prof, place=lambda ins: f"{relative.get(ins.file, ins.file)}:{ins.line}")
        # For the record, the instructions behind the labels: memory instructions and the divergent lines'.
        divergent = set(labelled["labels"]["divergence"])
        kept = [[i.file, i.line, i.sass, {k: round(v, 3) for k, v in i.values.items()}] for i in prof.instructions
                if i.values.get("memory_l2_theoretical_sectors_global") or i.values.get("memory_l1_wavefronts_shared")
                or f"{relative.get(i.file, i.file)}:{i.line}" in divergent]
        self.keep_log(job, json.dumps(kept), "instructions.json")
        outcome.update(reported_name=prof.name, **labelled)
        if not prof.instructions:
            outcome["error"] = "no source lines (built without -lineinfo?)"
        return outcome

    def sanitize(self, job: Job, binary: Path, prefixed: bool | None = None) -> dict:
        if prefixed is None:
            self.calibrated.wait()
            prefixed = self.prefixed
        cmd = sanitizer_command(job, binary, self.filter_option, prefixed)
        if self.args.dry_run:
            return self.dry(cmd)
        code, out, seconds = self.execute(cmd, binary.parent)
        self.keep_log(job, shlex.join(cmd) + "\n" + out)
        relative = self.relative_names(job.program)
        hits = [
            {"kind": hit["kind"], "message": hit["message"],
             "places": [f"{relative.get(f, f)}:{n}" for f, n in hit["places"]]}
            for hit in measure.parse_sanitizer(out, self.file_names(job.program))
        ]
        checked = "0 errors" in out or "ERROR SUMMARY" in out or "RACECHECK SUMMARY" in out
        return {"rc": code, "seconds": round(seconds, 1), "hits": hits, "summary_seen": checked,
                **({"error": f"sanitizer exit {code}"} if code not in (0, 1) and not hits else {})}

    def calibrate(self) -> None:
        """Runs the canaries (after the canary's build) and settles how the sanitizers' kernel filter names
        a kernel: if the race the canary must show is not reported with the length-prefixed mangled name,
        the plain name is tried; the canaries are then recorded with the form that worked (or the first)."""
        try:
            if self.binaries.get(CANARY["name"]) is None or self.args.dry_run:
                return
            tool, kernel, _ = CANARY_CHECKS[0]
            probe = Job(CANARY["name"], kernel, kernel, (), 0, tool)
            binary = self.binaries[CANARY["name"]]
            if not self.sanitize(probe, binary, prefixed=True).get("hits"):
                if self.sanitize(probe, binary, prefixed=False).get("hits"):
                    self.prefixed = False
                else:
                    log("calibrate: the canary race is not reported either way: sanitizer answers will not be used")
            log(f"calibrate: kernel filter kns=<{'length-prefixed ' if self.prefixed else ''}name>")
        finally:
            self.calibrated.set()

    def dry(self, cmd: list[str]) -> dict:
        with self.lock:
            with (self.args.out / "jobs.txt").open("a") as handle:
                handle.write(shlex.join(cmd) + "\n")
        return {"rc": 0, "seconds": 0.0, "dry_run": True}

    def file_names(self, program: str) -> set[str]:
        return set(self.relative_names(program))

    def relative_names(self, program: str) -> dict[str, str]:
        return {Path(f).name: f for f in self.programs[program]["files"]}


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ---------------------------------------------------------------- truth


def assemble(results: list[dict], manifest: dict, builds: dict[str, dict], meta: dict) -> dict:
    """truth.json: per program, per kernel key, the labels measured on its lines ("file:line")."""
    programs: dict[str, dict] = {}
    for program in manifest["programs"]:
        programs[program["name"]] = {
            "project": program["project"],
            "commit": program["commit"],
            "files": program["files"],
            "patches": program["patches"],
            "skip_reason": program["skip_reason"],
            "build": builds.get(program["name"], {}),
            "kernels": {},
        }
    for result in results:
        entry = programs.get(result["program"])  # the canary is none of them
        if entry is None or result.get("dry_run"):
            continue
        kernel = entry["kernels"].setdefault(result["key"], {"kernel": result["kernel"], "run": result["argv"],
                                                             "labels": {}, "measured": {}, "errors": []})
        tool = result["tool"]
        kernel["measured"][tool] = not result.get("error")
        if result.get("error"):
            kernel["errors"].append(f"{tool}: {result['error']}")
        if tool == "ncu" and not result.get("error"):
            kernel["labels"].update(result["labels"])
            kernel["ratios"] = result["ratios"]
            kernel["lines"] = result["lines"]
            kernel["launch"] = {
                "skip": result["skip"],
                **({"skip_planned": result["skip_planned"]} if "skip_planned" in result else {}),
                **{k.split("__")[-1]: v for k, v in result.get("kernel_metrics", {}).items() if k.startswith("launch__")},
            }
            kernel["kernel_metrics"] = result.get("kernel_metrics", {})
        elif tool in ("racecheck", "synccheck"):
            category = "race" if tool == "racecheck" else "sync"
            groups = []
            for hit in result.get("hits", []):
                if hit["places"] and hit["places"] not in groups:
                    groups.append(hit["places"])
            kernel["labels"][f"{category}_groups"] = groups
            kernel["labels"][category] = sorted({p for g in groups for p in g})
            kernel.setdefault("sanitizer_hits", {})[tool] = [h["kind"] for h in result.get("hits", [])]
    canary = {}
    for tool, kernel, positive in CANARY_CHECKS:
        answers = [r for r in results if r["program"] == CANARY["name"] and r["kernel"] == kernel and r["tool"] == tool]
        if answers and not answers[-1].get("dry_run") and not answers[-1].get("error"):
            canary[f"{tool} {kernel}"] = bool(answers[-1].get("hits")) == positive
    return {
        "version": 1,
        "suite": "realworld",
        "canary": canary,
        "measured": any(r for r in results if not r.get("dry_run")),
        **meta,
        "projects": manifest["projects"],
        "thresholds": {
            "uncoalesced_sector_ratio": measure.UNCOALESCED_RATIO,
            "bank_conflict_wavefront_ratio": measure.BANK_CONFLICT_RATIO,
            "divergence_lane_fraction": measure.DIVERGENCE_LANE_FRACTION,
            "divergence_min_share": measure.DIVERGENCE_MIN_SHARE,
            "min_sectors": measure.MIN_SECTORS,
            "target_threads": manifest.get("target_threads"),
        },
        "programs": programs,
    }


def read_results(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    results = []
    for line in path.read_text().splitlines():
        try:
            results.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a kill
    return results


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the fetched suite (fetch_realworld.py --out)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", HERE / "out-realworld")))
    parser.add_argument("--work", type=Path, default=Path("/tmp/cudalens-realworld"), help="binaries, reports, logs")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 4, help="builds and sanitizer runs at once")
    parser.add_argument("--ncu-jobs", type=int, default=4, help="ncu processes at once (their kernels queue on ncu's lock)")
    parser.add_argument("--timeout", type=float, default=150, help="seconds one tool run may take")
    parser.add_argument("--budget", type=float, default=420, help="seconds after which no tool run starts")
    parser.add_argument("--deadline", type=float, default=480, help="seconds after which running tools are stopped")
    parser.add_argument("--only", nargs="*", help="programs whose name contains one of these")
    parser.add_argument("--kernels", type=Path, help="a file of kernel names, one a line: measure only these (e.g. the "
                        "kernels cudalens has findings on, when the device time is short)")
    parser.add_argument("--resume", type=Path, help="an earlier --out: its finished jobs are not run again")
    parser.add_argument("--nvcc-flag", action="append", default=[], help="an extra nvcc flag (e.g. -I for cuBLAS headers)")
    parser.add_argument("--dry-run", action="store_true", help="build, then write the tool commands to jobs.txt")
    args = parser.parse_args(argv)

    started = time.monotonic()
    if args.dry_run:  # nothing runs but builds: the time limits are for tool runs
        args.budget = args.deadline = 86400.0  # a day: poll() takes int milliseconds, 1e9 s overflows it
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.root / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as exc:
        print(f"measure_realworld: cannot read {manifest_path}: {exc} (run fetch_realworld.py)", file=sys.stderr)
        return 2
    programs, jobs = plan(manifest, args.only)
    by_name = {p["name"]: p for p in (*manifest["programs"], CANARY)}
    previous = read_results(args.resume / "results.jsonl") if args.resume else []
    finished = {f"{r['tool']} {r['program']} {r['key']}" for r in previous if not r.get("dry_run")}
    if args.resume and args.resume.resolve() != args.out.resolve():
        with (args.out / "results.jsonl").open("a") as handle:
            handle.writelines(json.dumps(r) + "\n" for r in previous)
    jobs = [j for j in jobs if j.ident not in finished]
    if args.kernels:
        wanted = set(args.kernels.read_text().split())
        jobs = [j for j in jobs if j.kernel in wanted or j.program == CANARY["name"]]
    (args.out / "jobs.txt").unlink(missing_ok=True)
    log(f"{len(programs)} programs, {len(jobs)} tool runs to do ({len(finished)} done before)")

    binaries: dict[str, Path | None] = {}
    builds: dict[str, dict] = {}
    runner = Runner(args, by_name, binaries, started)
    done = threading.Event()

    def finish(*_signal) -> None:
        if done.is_set():
            return
        done.set()
        runner.stop_children()
        write_outputs(args, manifest, builds, runner)

    signal.signal(signal.SIGTERM, lambda *a: (finish(), os._exit(0)))
    watchdog = threading.Timer(max(1.0, args.deadline - (time.monotonic() - started)), runner.stop_children)
    watchdog.daemon = True
    watchdog.start()

    ncu_pool = ThreadPoolExecutor(max_workers=max(1, args.ncu_jobs))
    sanitizer_pool = ThreadPoolExecutor(max_workers=max(1, args.jobs - args.ncu_jobs))
    futures = []

    def built(program: dict) -> None:
        left = args.deadline - (time.monotonic() - started)
        binary, text, seconds = build(program, args.root, args.work, args.arch, args.nvcc_flag, max(1.0, left))
        binaries[program["name"]] = binary
        builds[program["name"]] = {"ok": binary is not None, "seconds": round(seconds, 1)}
        (runner.raw / f"{program['name'].replace('/', '+')}.nvcc.txt").write_text(text)
        log(f"built {program['name']} in {seconds:.0f}s" if binary else f"BUILD FAILED: {program['name']}")
        if program is CANARY:
            runner.calibrate()
        for job in jobs:
            if job.program == program["name"]:
                pool = ncu_pool if job.tool == "ncu" else sanitizer_pool
                futures.append(pool.submit(runner.run_job, job))

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as build_pool:
        list(build_pool.map(built, programs))
    log(f"all built at {time.monotonic() - started:.0f}s")
    while True:  # futures grows while builds finish; all have been submitted by now
        pending = [f for f in futures if not f.done()]
        if not pending:
            break
        pending[0].result()
    ncu_pool.shutdown()
    sanitizer_pool.shutdown()
    watchdog.cancel()
    finish()
    return 0


def write_outputs(args, manifest: dict, builds: dict, runner: Runner) -> None:
    runner.results_file.flush()
    results = read_results(args.out / "results.jsonl")
    meta = {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": "" if args.dry_run else measure.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                                    "--format=csv,noheader"], 30)[1].strip(),
        "ncu": "" if args.dry_run else measure.run(["ncu", "--version"], 30)[1].strip().splitlines()[-1:],
        "sanitizer": "" if args.dry_run else measure.run(["compute-sanitizer", "--version"], 30)[1].strip().splitlines()[-1:],
        "reader": "ncu_report" if runner.ncu_report else "csv",
        "seconds": round(time.monotonic() - runner.started, 1),
    }
    truth = assemble(results, manifest, builds, meta)
    # Compact: it travels back from the GPU machine (16 MiB a file); score_realworld.py reads it either way.
    (args.out / "truth.json").write_text(json.dumps(truth, sort_keys=True, separators=(",", ":")) + "\n")
    archive_path = args.out / "raw.tar.gz"
    for keep in (lambda name: True, lambda name: not name.endswith(".instructions.json")):
        with tarfile.open(archive_path, "w:gz") as archive:
            archive.add(runner.raw, arcname="raw", filter=lambda info, keep=keep: info if keep(info.name) else None)
        if archive_path.stat().st_size <= MAX_RETURNED_FILE:
            break  # else again without the per-instruction dumps: a file over the limit would not come back
    measured = sum(1 for p in truth["programs"].values() for k in p["kernels"].values() if k["measured"].get("ncu"))
    log(f"wrote {args.out / 'truth.json'}: {measured} kernels profiled, {len(results)} tool runs, "
        f"{meta['seconds']:.0f}s")
    shutil.rmtree(args.work / "reports", ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
