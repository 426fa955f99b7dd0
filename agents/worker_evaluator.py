"""Evaluates candidates in a child process: its own process group, a timeout, a scrubbed environment.

The child is `candidate_runner.py` under the configured interpreter (the user's, with torch). It compiles
(imports, which runs load_inline), tests the candidate against the reference `Model` over fresh random inputs,
and times both. A hang becomes a `timeout` outcome and the whole process group is killed; an API key never
reaches the child because secrets are removed from its environment.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from cudalens.agents.evaluation import (
    CompileOutcome,
    CorrectnessOutcome,
    Evaluation,
    EvaluationKind,
    Measurement,
    TimingOutcome,
    source_hash,
)
from cudalens.agents.judge.metrics import CORE_METRICS, JUDGE_METRICS
from cudalens.agents.ncu_csv import kernel_names, ncu_command, parse_ncu_csv

RUNNER = Path(__file__).with_name("candidate_runner.py")
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)


@dataclass(frozen=True)
class WorkerSettings:
    python: str = sys.executable
    timeout_s: float = 300.0  # per candidate: a cold load_inline build is part of it
    trials: int = 5
    seed: int = 42
    time_budget_ms: float = 200.0
    build_root: str | None = None  # load_inline build cache; None: ~/.cache/cudalens/builds
    secret_env: tuple[str, ...] = ("OPENAI_API_KEY",)
    max_file_bytes: int = 4 * 2**30
    ncu: str | None = None  # path of Nsight Compute's CLI: profile correct candidates on a GPU (None: don't)
    ncu_metrics: tuple[str, ...] = JUDGE_METRICS


def secret_names(named: tuple[str, ...]) -> list[str]:
    """The variables of this environment a candidate must not see: those named, and any named like a
    credential (…API_KEY, …TOKEN, …SECRET, …PASSWORD)."""
    return [k for k in os.environ if k in named or _SECRET_NAME.search(k)]


def scrubbed_environment(secret_env: tuple[str, ...], home: str) -> dict[str, str]:
    """The parent's environment without the Coder's key or anything named like a credential."""
    hidden = set(secret_names(secret_env))
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    # HOME and TMPDIR point into the candidate's scratch folder (deleted afterwards); the user's site-packages
    # stay importable through PYTHONUSERBASE.
    env.setdefault("PYTHONUSERBASE", site.getuserbase())
    env.update(HOME=home, TMPDIR=home, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    return env


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@dataclass
class WorkerEvaluator:
    """`CandidateEvaluator` over `candidate_runner.py`; `cancel()` kills the evaluation in flight."""

    reference_source: str
    settings: WorkerSettings = field(default_factory=WorkerSettings)
    _proc: subprocess.Popen | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _stdout: str = field(default="", init=False, repr=False)

    def cancel(self) -> None:
        with self._lock:
            if self._proc is not None:
                kill_group(self._proc.pid)

    def evaluate(self, source: str, kind: EvaluationKind = "full") -> Evaluation:
        started = time.perf_counter()
        build_root = self.settings.build_root or str(Path.home() / ".cache" / "cudalens" / "builds")
        Path(build_root).mkdir(parents=True, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix="cudalens-candidate-")
        try:
            ref_path, cand_path = Path(tmp, "reference.py"), Path(tmp, "candidate.py")
            ref_path.write_text(self.reference_source, encoding="utf-8")
            cand_path.write_text(source, encoding="utf-8")
            job = {
                "reference": str(ref_path),
                "candidate": str(cand_path),
                "trials": self.settings.trials,
                "seed": self.settings.seed,
                "time_budget_ms": self.settings.time_budget_ms,
                "build_root": build_root,
                "kind": "test" if kind == "test" else "full",
            }
            raw, stderr, timed_out = self._run(job, tmp)
            evaluation = _evaluation(source, raw, stderr, timed_out, self.settings.timeout_s, 0.0)
            if (
                self.settings.ncu
                and kind in ("full", "profile")
                and evaluation.correct
                and evaluation.device != "cpu"
            ):
                profiles, note = self._profile(job, tmp, source)
                evaluation = replace(
                    evaluation, profiles=profiles, notes=(*evaluation.notes, *([note] if note else []))
                )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return replace(evaluation, seconds=time.perf_counter() - started)

    def _profile(self, job: dict, cwd: str, source: str) -> tuple[tuple, str]:
        """ncu metrics for the candidate's kernels (one profiled forward call), or why there are none. A metric
        this ncu or GPU does not know fails the whole run, so that case is retried with the core set."""
        text, why = "", "no output"
        for metrics in (self.settings.ncu_metrics, CORE_METRICS):
            log = Path(cwd, "ncu.csv")
            log.unlink(missing_ok=True)
            prefix = ncu_command(self.settings.ncu, metrics, kernel_names(source), str(log))
            _raw, stderr, timed_out = self._run({**job, "kind": "profile", "trials": 1}, cwd, prefix)
            try:
                text = log.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            profiles = tuple(parse_ncu_csv(text + "\n" + self._stdout))  # the CSV lands in one or the other
            if profiles:
                return profiles, ""
            why = (
                "timed out"
                if timed_out
                else (text.strip() or stderr.strip() or "no output").splitlines()[-1][:300]
            )
            if timed_out or "metric" not in (text + stderr).lower():
                break
        return (), f"ncu profiled nothing: {why}"

    def _run(self, job: dict, cwd: str, prefix: list[str] | None = None) -> tuple[dict | None, str, bool]:
        limit = self.settings.max_file_bytes

        def limits() -> None:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        command = [*(prefix or []), self.settings.python, str(RUNNER)]
        try:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=scrubbed_environment(self.settings.secret_env, cwd),
                start_new_session=True,  # its own process group: one killpg ends it and whatever it spawned
                preexec_fn=limits,
            )
        except OSError as exc:
            return {"error": f"cannot start the worker ({command[0]}): {exc.strerror or exc}"}, "", False
        with self._lock:
            self._proc = proc
        timed_out = False
        try:
            out, err = proc.communicate((json.dumps(job) + "\n").encode(), timeout=self.settings.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc.pid)
            out, err = proc.communicate()
        finally:
            kill_group(proc.pid)  # children the candidate left behind go too
            with self._lock:
                self._proc = None
        out, err = out.decode(errors="replace"), err.decode(errors="replace")
        self._stdout = out
        for line in reversed(out.strip().splitlines()):
            try:
                return json.loads(line), err, timed_out
            except json.JSONDecodeError:
                continue
        return None, err, timed_out


def _evaluation(
    source: str, raw: dict | None, stderr: str, timed_out: bool, timeout_s: float, seconds: float
) -> Evaluation:
    digest = source_hash(source)
    tail = stderr.strip()[-3000:]
    if timed_out:
        return Evaluation(
            digest,
            CompileOutcome(ok=True),
            CorrectnessOutcome(
                "timeout", message=f"the candidate ran past the worker's {timeout_s:g} s limit and was killed"
            ),
            seconds=seconds,
            notes=(tail,) if tail else (),
        )
    if raw is None or "error" in raw:
        detail = (raw or {}).get("error") or tail or "the worker exited without a result"
        return Evaluation(
            digest,
            CompileOutcome(ok=True),
            CorrectnessOutcome(
                "crashed", message=detail.strip().splitlines()[-1][:300], traceback=detail[-6000:]
            ),
            seconds=seconds,
        )
    notes = tuple(raw.get("notes", ()))
    comp = raw.get("compile", {})
    compile_outcome = CompileOutcome(
        ok=bool(comp.get("ok")), log=comp.get("log", ""), seconds=comp.get("seconds", 0)
    )
    if not compile_outcome.ok:
        return Evaluation(
            digest,
            compile_outcome,
            CorrectnessOutcome("not_run"),
            device=raw.get("device", "cpu"),
            seconds=seconds,
            notes=notes,
        )
    c = raw.get("correctness", {})
    correctness = CorrectnessOutcome(
        status=c.get("status", "crashed"),
        trials=c.get("trials", 0),
        passed_trials=c.get("passed_trials", 0),
        max_abs_error=c.get("max_abs_error"),
        max_rel_error=c.get("max_rel_error"),
        message=c.get("message", ""),
        traceback=c.get("traceback", ""),
        warnings=tuple(c.get("warnings", ())),
    )
    timing = None
    if "timing" in raw:
        t = raw["timing"]
        timing = TimingOutcome(
            Measurement.of(t["candidate"]), Measurement.of(t["reference"]), t.get("device", "cpu")
        )
    return Evaluation(
        digest,
        compile_outcome,
        correctness,
        timing,
        device=raw.get("device", "cpu"),
        seconds=seconds,
        notes=notes,
    )
