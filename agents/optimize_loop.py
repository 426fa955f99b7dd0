"""The Coder–Judge loop: evaluate, judge, ask the Coder to repair or optimize, keep the fastest correct candidate.

Round 0 evaluates the current file. Each later round asks the Coder (a repair prompt when the last candidate
failed, an optimize prompt when it was correct), extracts the new file, checks it for cheating, evaluates it
(compile, test, time, profile) and judges it. The loop stops at N rounds, at the token or dollar budget, on
cancel, or after `patience` rounds without a better correct candidate. Nothing is written to the user's file:
the result carries the best source and the caller offers it as an edit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from cudalens.agents.coder.client import CoderCancelled, CoderClient, CoderError
from cudalens.agents.coder.extract import NoCodeError, extract_source
from cudalens.agents.coder.prompts import PromptContext, no_code_followup, optimize_messages, repair_messages
from cudalens.agents.coder.usage import Usage
from cudalens.agents.evaluation import CandidateEvaluator, Evaluation
from cudalens.agents.gpu_specs import DEFAULT_GPU, GpuSpecs
from cudalens.agents.judge import Verdict, judge, judge_input
from cudalens.agents.judge.render import render_markdown
from cudalens.agents.run_log import RunLog
from cudalens.analysis.findings import Finding
from cudalens.profiler.anti_cheat import AntiCheatPolicy, CheatFinding, check_candidate, rejected

RoundKind = Literal["initial", "first", "repair", "optimize"]
StopReason = Literal["rounds", "budget", "cancelled", "no-progress", "repaired", "coder-error"]


@dataclass(frozen=True)
class LoopSettings:
    rounds: int = 10
    budget_usd: float | None = None
    budget_tokens: int | None = None
    patience: int = (
        4  # stop after this many rounds without beating the best correct candidate (or without code)
    )
    min_improvement: float = 0.02  # a new best must be this much faster (2 %)
    repair_only: bool = False  # "Fix with Coder": stop as soon as a candidate is correct
    anti_cheat: AntiCheatPolicy = field(default_factory=AntiCheatPolicy)
    no_code_retries: int = 1  # ask again in the same round when a reply has no usable code


@dataclass(frozen=True)
class Progress:
    round: int
    rounds: int
    phase: str  # "evaluating" | "judging" | "coding"
    best_speedup: float | None
    message: str


@dataclass(frozen=True)
class RoundRecord:
    index: int
    kind: RoundKind
    source: str | None
    evaluation: Evaluation | None
    verdict: Verdict | None
    cheats: tuple[CheatFinding, ...] = ()
    usage: Usage = field(default_factory=Usage)
    error: str = ""  # the Coder failed or its reply had no code
    seconds_eval: float = 0.0
    seconds_llm: float = 0.0

    @property
    def speedup(self) -> float | None:
        return self.evaluation.speedup if self.evaluation and not rejected(list(self.cheats)) else None


@dataclass
class OptimizeResult:
    original_source: str
    best_source: str | None
    best_round: int | None
    best_speedup: float | None
    stop_reason: StopReason
    rounds: list[RoundRecord]
    usage: Usage
    run_dir: Path | None

    @property
    def improved(self) -> bool:
        return self.best_round is not None and self.best_round > 0

    def summary_line(self) -> str:
        speed = f"{self.best_speedup:.2f}×" if self.best_speedup else "no correct candidate"
        where = f"round {self.best_round}" if self.best_round is not None else "-"
        return (
            f"best {speed} ({where}), {len(self.rounds)} rounds, {self.usage.total_tokens} tokens, "
            f"${self.usage.cost_usd:.4f}, stopped: {self.stop_reason}"
        )


class OptimizeLoop:
    def __init__(
        self,
        evaluator: CandidateEvaluator,
        coder: CoderClient,
        reference_source: str,
        *,
        kernel: str | None = None,
        gpu: GpuSpecs = DEFAULT_GPU,
        settings: LoopSettings | None = None,
        cancel: threading.Event | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        run_root: Path | None = None,
        findings_for: Callable[[str], list[Finding]] | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.coder = coder
        self.reference = reference_source
        self.kernel = kernel
        self.gpu = gpu
        self.settings = settings or LoopSettings()
        self.cancel = cancel or threading.Event()
        self.on_progress = on_progress or (lambda p: None)
        self.run_root = run_root
        self.findings_for = findings_for or (lambda source: [])
        self.usage = Usage()
        self.best: tuple[int, str, float] | None = None
        self.log: RunLog | None = None

    # -- steps -------------------------------------------------------------------------------------------
    def _progress(self, k: int, phase: str, message: str) -> None:
        self.on_progress(
            Progress(k, self.settings.rounds, phase, self.best[2] if self.best else None, message)
        )

    def _evaluate(self, source: str) -> tuple[Evaluation, float]:
        """Evaluate with cancel wired to the evaluator's kill switch (if it has one)."""
        done = threading.Event()
        killer = getattr(self.evaluator, "cancel", None)

        def watch() -> None:
            while not done.is_set():
                if self.cancel.wait(0.1) and killer is not None:
                    killer()
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        t0 = time.perf_counter()
        try:
            return self.evaluator.evaluate(source, "full"), time.perf_counter() - t0
        finally:
            done.set()
            watcher.join()

    def _judge(self, source: str, evaluation: Evaluation | None, cheats: list[CheatFinding]) -> Verdict:
        return judge(
            judge_input(evaluation, self.kernel, self.findings_for(source), cheats=cheats, gpu=self.gpu)
        )

    def _over_budget(self) -> bool:
        s = self.settings
        return (s.budget_usd is not None and self.usage.cost_usd >= s.budget_usd) or (
            s.budget_tokens is not None and self.usage.total_tokens >= s.budget_tokens
        )

    def _ask(self, k: int, kind: RoundKind, last: RoundRecord) -> tuple[str | None, Usage, str, float]:
        """The Coder's next file for round k, or the reason there is none."""
        details = ""
        if last.evaluation is not None:
            details = last.evaluation.compile.log or last.evaluation.correctness.traceback
        ctx = PromptContext(self.reference, last.source, self.gpu, last.verdict, details)
        messages = repair_messages(ctx) if kind == "repair" else optimize_messages(ctx)
        usage = Usage()
        t0 = time.perf_counter()
        for attempt in range(self.settings.no_code_retries + 1):
            reply = self.coder.complete(messages, cancel=self.cancel)
            usage = usage + reply.usage
            self.usage = self.usage + reply.usage
            if self.log:
                self.log.write_round(
                    k,
                    {
                        f"prompt{'-' + str(attempt) if attempt else ''}.md": _messages_text(messages),
                        f"reply{'-' + str(attempt) if attempt else ''}.md": reply.text,
                    },
                )
            try:
                extracted = extract_source(reply.text, last.source, self.kernel)
                return extracted.source, usage, "", time.perf_counter() - t0
            except NoCodeError as exc:
                error = str(exc)
                if self._over_budget() or self.cancel.is_set():
                    break
                messages = no_code_followup(messages, reply.text, error)
        return None, usage, error, time.perf_counter() - t0

    # -- the loop ----------------------------------------------------------------------------------------
    def run(self, source: str) -> OptimizeResult:
        if self.run_root is not None:
            secret = self.coder.settings.api_key()
            self.log = RunLog(self.run_root, self.kernel or "model", (secret,) if secret else ())
        rounds: list[RoundRecord] = []
        stop: StopReason = "rounds"
        first = self._round_zero(source)
        rounds.append(first)
        self._record(first)
        last = first
        stale = 0
        for k in range(1, self.settings.rounds + 1):
            if self.cancel.is_set():
                stop = "cancelled"
                break
            if self._over_budget():
                stop = "budget"
                break
            if self.settings.repair_only and last.evaluation is not None and last.evaluation.correct:
                stop = "repaired"
                break
            kind: RoundKind = (
                "first"
                if last.source is None
                else (
                    "optimize"
                    if last.evaluation is not None
                    and last.evaluation.correct
                    and not rejected(list(last.cheats))
                    else "repair"
                )
            )
            self._progress(k, "coding", f"round {k}/{self.settings.rounds}: asking the Coder ({kind})")
            try:
                candidate, usage, error, llm_s = self._ask(k, kind, last)
            except CoderCancelled:
                stop = "cancelled"
                break
            except CoderError as exc:
                rec = RoundRecord(k, kind, None, None, None, error=str(exc))
                rounds.append(rec)
                self._record(rec)
                stop = "coder-error"
                break
            if candidate is None:
                rec = RoundRecord(k, kind, None, None, None, usage=usage, error=error, seconds_llm=llm_s)
                rounds.append(rec)
                self._record(rec)
                stale += 1
                if stale >= self.settings.patience:
                    stop = "no-progress"
                    break
                continue
            rec = self._evaluate_round(k, kind, candidate, usage, llm_s)
            rounds.append(rec)
            self._record(rec)
            if self.cancel.is_set():
                stop = "cancelled"
                break
            improved = self._consider(rec)
            # "no progress" means the best stopped improving; while nothing is correct yet, repairs go on
            stale = 0 if improved else stale + 1 if self.best is not None else stale
            last = rec
            if stale >= self.settings.patience:
                stop = "no-progress"
                break
        else:
            if self._over_budget():
                stop = "budget"
        if (
            self.settings.repair_only
            and stop == "rounds"
            and last.evaluation is not None
            and last.evaluation.correct
        ):
            stop = "repaired"
        best = self.best
        result = OptimizeResult(
            source,
            best[1] if best else None,
            best[0] if best else None,
            best[2] if best else None,
            stop,
            rounds,
            self.usage,
            self.log.folder if self.log else None,
        )
        if self.log:
            _write_summary(self.log, result, self.kernel)
        self._progress(len(rounds) - 1, "done", result.summary_line())
        return result

    def _round_zero(self, source: str) -> RoundRecord:
        if "class ModelNew" not in source:
            return RoundRecord(0, "initial", None, None, None, error="the file has no ModelNew yet")
        self._progress(0, "evaluating", f"round 0/{self.settings.rounds}: evaluating the current kernel")
        policy = AntiCheatPolicy(
            self.settings.anti_cheat.require_custom_kernel, True, self.settings.anti_cheat.reference_dtype
        )
        # the user's own kernel is judged, not rejected: only warnings from the anti-cheat checks
        cheats = [replace(c, severity="warn") for c in check_candidate(source, policy)]
        evaluation, secs = self._evaluate(source)
        rec = RoundRecord(
            0,
            "initial",
            source,
            evaluation,
            self._judge(source, evaluation, []),
            tuple(cheats),
            seconds_eval=secs,
        )
        self._consider(rec)
        return rec

    def _evaluate_round(
        self, k: int, kind: RoundKind, candidate: str, usage: Usage, llm_s: float
    ) -> RoundRecord:
        cheats = check_candidate(candidate, self.settings.anti_cheat)
        if rejected(cheats):
            return RoundRecord(
                k,
                kind,
                candidate,
                None,
                self._judge(candidate, None, cheats),
                tuple(cheats),
                usage,
                seconds_llm=llm_s,
            )
        self._progress(k, "evaluating", f"round {k}/{self.settings.rounds}: compiling, testing, timing")
        evaluation, secs = self._evaluate(candidate)
        verdict = self._judge(candidate, evaluation, cheats)
        return RoundRecord(k, kind, candidate, evaluation, verdict, tuple(cheats), usage, "", secs, llm_s)

    def _consider(self, rec: RoundRecord) -> bool:
        speed = rec.speedup
        if speed is None or rec.source is None:
            return False
        if self.best is None or speed > self.best[2] * (1 + self.settings.min_improvement):
            self.best = (rec.index, rec.source, speed)
            return True
        return False

    def _record(self, rec: RoundRecord) -> None:
        if self.log is None:
            return
        files: dict[str, str | dict | list] = {}
        if rec.source is not None:
            files["source" + self.log.suffix] = rec.source
        if rec.verdict is not None:
            files["verdict.json"] = rec.verdict.to_json()
            files["verdict.md"] = render_markdown(rec.verdict)
        if rec.evaluation is not None:
            files["evaluation.json"] = rec.evaluation
        files["round.json"] = {
            "index": rec.index,
            "kind": rec.kind,
            "speedup": rec.speedup,
            "error": rec.error,
            "cheats": list(rec.cheats),
            "usage": rec.usage,
            "seconds_eval": rec.seconds_eval,
            "seconds_llm": rec.seconds_llm,
        }
        self.log.write_round(rec.index, files)


def _messages_text(messages: list[dict[str, str]]) -> str:
    return "\n\n".join(f"# {m['role']}\n\n{m['content']}" for m in messages)


def _write_summary(log: RunLog, result: OptimizeResult, kernel: str | None) -> None:
    rows = []
    for r in result.rounds:
        status = (
            "no code"
            if r.source is None
            else "rejected"
            if rejected(list(r.cheats))
            else (
                "correct"
                if r.evaluation and r.evaluation.correct
                else (r.evaluation.correctness.status if r.evaluation else "-")
            )
        )
        rows.append(
            {
                "round": r.index,
                "kind": r.kind,
                "status": status,
                "speedup": r.speedup,
                "verdict": r.verdict.summary if r.verdict else r.error,
                "tokens": r.usage.total_tokens,
                "cost_usd": r.usage.cost_usd,
                "seconds_eval": round(r.seconds_eval, 3),
                "seconds_llm": round(r.seconds_llm, 3),
            }
        )
    evals = [r.seconds_eval for r in result.rounds if r.evaluation is not None]
    summary = {
        "kernel": kernel,
        "stop_reason": result.stop_reason,
        "best_round": result.best_round,
        "best_speedup": result.best_speedup,
        "rounds": rows,
        "usage": result.usage,
        "mean_seconds_eval": sum(evals) / len(evals) if evals else None,
    }
    log.write("summary.json", summary)
    if result.best_source is not None:
        log.write("best" + log.suffix, result.best_source)
    lines = [
        f"# Optimize run: {kernel or 'model'}",
        "",
        f"- Result: {result.summary_line()}",
        f"- Best source: {'best' + log.suffix if result.best_source else 'none'}",
        "",
        "| round | kind | status | speedup | verdict | tokens | cost $ | eval s | LLM s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        speed = f"{row['speedup']:.2f}×" if row["speedup"] else ""
        lines.append(
            f"| {row['round']} | {row['kind']} | {row['status']} | {speed} | "
            f"{str(row['verdict']).replace('|', '/')} | {row['tokens']} | {row['cost_usd']:.4f} | "
            f"{row['seconds_eval']:.1f} | {row['seconds_llm']:.1f} |"
        )
    lines += ["", "Each `round-NN/` folder holds the round's source, prompt, reply, verdict and evaluation."]
    log.write("summary.md", "\n".join(lines) + "\n")
