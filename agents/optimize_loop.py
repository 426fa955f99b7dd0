"""The Coder–Judge loop as a search: evaluate, judge, ask the Coder to repair or optimize, keep the fastest correct
candidate.

Round 0 evaluates the current file. Then the search policy (agents/search/policies.py: chain, beam or tree) names
which candidates to expand, up to `width` at once; for each, the Coder is asked (a repair prompt when the candidate
failed, an optimize prompt with the Judge's — or the policy's — method when it was correct), the new file is
extracted, checked for cheating, evaluated on the first free device (compile, test, time, profile) and judged.
Sources seen before (normalised) are not evaluated again. The search stops when it has asked for `rounds`
candidates, at the token, dollar or wall-time budget, on cancel (every branch), or after `patience` × `width`
candidates without a better correct one, when the Coder fails, or at the first evaluation that failed because of
the machine (no GPU, no CUDA toolkit: machine_failures.py), which no repair can fix. Nothing is written to the user's file: the result carries the best
source and the caller offers it as an edit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from cudalens.agents.coder.client import CoderCancelled, CoderClient, CoderError
from cudalens.agents.coder.extract import NoCodeError, extract_source
from cudalens.agents.coder.prompts import PromptContext, no_code_followup, optimize_messages, repair_messages
from cudalens.agents.coder.usage import Usage
from cudalens.agents.evaluation import CandidateEvaluator, Evaluation, EvaluationKind
from cudalens.agents.gpu_specs import DEFAULT_GPU, GpuSpecs
from cudalens.agents.judge import Verdict, judge, judge_input
from cudalens.agents.judge.methods import METHODS
from cudalens.agents.judge.render import render_markdown
from cudalens.agents.machine_failures import machine_failure
from cudalens.agents.run_log import RunLog
from cudalens.agents.search.devices import DeviceLeases
from cudalens.agents.search.policies import SearchPolicyName, policy_for
from cudalens.agents.search.tree import (
    Expansion,
    RoundKind,
    RoundRecord,
    SearchTree,
    normalised_key,
    render_tree,
    status_of,
)
from cudalens.analysis import python_ast
from cudalens.analysis.findings import Finding
from cudalens.worker.child.anti_cheat import AntiCheatPolicy, CheatFinding, check_candidate, rejected

__all__ = ["LoopProgress", "LoopSettings", "OptimizeLoop", "OptimizeResult", "RoundKind", "RoundRecord"]

StopReason = Literal["rounds", "budget", "cancelled", "no-progress", "repaired", "coder-error", "machine"]


@dataclass(frozen=True)
class LoopSettings:
    rounds: int = 10  # candidates the search may ask the Coder for, all branches together
    budget_usd: float | None = None
    budget_tokens: int | None = None
    budget_seconds: float | None = None  # wall time of the whole run; past it every branch is stopped
    patience: int = (
        4  # stop after this many rounds (× width) without beating the best correct candidate (or without code)
    )
    min_improvement: float = 0.02  # a new best must be this much faster (2 %)
    repair_only: bool = False  # "Fix with Coder": stop as soon as a candidate is correct
    anti_cheat: AntiCheatPolicy = field(default_factory=AntiCheatPolicy)
    no_code_retries: int = 1  # ask again in the same round when a reply has no usable code
    search: SearchPolicyName = "chain"
    width: int = 1  # expansions in flight at once (beam: the beam's size); chain is always 1
    # beam and tree: profile the most promising correct candidate not yet profiled whenever a device is idle (a
    # lease free, no candidate waiting for one), so that its first expansion finds its profile made instead of
    # waiting for it before the Coder is asked; off: profiled when first expanded (issue 39, to be measured)
    profile_ahead: bool = False


@dataclass(frozen=True)
class LoopProgress:
    round: int
    rounds: int
    phase: str  # "evaluating" | "judging" | "coding" | "done"
    best_speedup: float | None
    message: str
    best_round: int | None = None  # the node holding the best correct candidate so far


@dataclass
class OptimizeResult:
    original_source: str
    best_source: str | None
    best_round: int | None
    best_speedup: float | None
    stop_reason: StopReason
    rounds: list[RoundRecord]  # every node of the search tree, by index
    usage: Usage
    run_dir: Path | None
    search: SearchPolicyName = "chain"
    stop_detail: str = ""  # what was behind "coder-error" or "machine": the error itself

    @property
    def improved(self) -> bool:
        return self.best_round is not None and self.best_round > 0

    @property
    def coder_rounds(self) -> int:
        """Rounds that asked the Coder (round 0 only evaluates the file)."""
        return sum(1 for r in self.rounds if r.index > 0)

    def summary_line(self) -> str:
        if not self.best_speedup:
            speed = "no correct candidate"
        elif self.best_speedup >= 1:
            speed = f"{self.best_speedup:.2f}× faster"
        else:  # the best correct candidate can still lose to the reference: say so, not "0.57× faster"
            speed = f"{self.best_speedup:.2f}× the reference's speed (slower)"
        where = f"round {self.best_round}" if self.best_round is not None else "-"
        detail = f" ({self.stop_detail})" if self.stop_detail else ""
        return (
            f"best {speed} ({where}), {self.coder_rounds} Coder round(s), {self.usage.total_tokens} tokens, "
            f"${self.usage.cost_usd:.4f}, stopped: {self.stop_reason}{detail}"
        )

    def tree(self) -> str:
        """The search tree, parent → child, with each node's status and speedup."""
        return render_tree(self.rounds, self.best_round)


_Outcome = Literal["ok", "no-code", "coder-error", "cancelled"]


class OptimizeLoop:
    def __init__(
        self,
        evaluator: CandidateEvaluator | DeviceLeases,
        coder: CoderClient,
        reference_source: str,
        *,
        kernel: str | None = None,
        gpu: GpuSpecs = DEFAULT_GPU,
        settings: LoopSettings | None = None,
        cancel: threading.Event | None = None,
        on_progress: Callable[[LoopProgress], None] | None = None,
        run_root: Path | None = None,
        findings_for: Callable[[str], list[Finding]] | None = None,
    ) -> None:
        self.devices = evaluator if isinstance(evaluator, DeviceLeases) else DeviceLeases([evaluator])
        self.coder = coder
        self.reference = reference_source
        self.kernel = kernel
        self.gpu = gpu
        self.settings = settings or LoopSettings()
        self.policy = policy_for(self.settings.search, self.settings.width)
        self.cancel = cancel or threading.Event()
        self.on_progress = on_progress or (lambda p: None)
        self.run_root = run_root
        self.findings_for = findings_for or (lambda source: [])
        self.usage = Usage()
        self.best: tuple[int, str, float] | None = None
        self.log: RunLog | None = None
        self._halt = threading.Event()  # cancel or the wall-time budget: every branch stops
        self._lock = threading.Lock()  # usage and the table of sources seen, shared by the branches
        self._seen: dict[str, Future[RoundRecord | None]] = {}
        # beam and tree profile a candidate when it is first expanded, not when it is evaluated: most leaves of a
        # wide search are never expanded, and ncu is most of a round's GPU time (≈ 4–7 s of ≈ 6–8 s on the
        # H200). The chain expands every correct candidate at once, so it profiles in the same job.
        self._profile_on_expand = self.policy.name != "chain"
        self._profiled: dict[int, Future[RoundRecord]] = {}  # node → the node with its profile and new verdict
        self._no_profiles = False  # a profile came back empty (no ncu, profiling off): stop asking for more
        self._started = time.monotonic()

    # -- steps -------------------------------------------------------------------------------------------
    def _progress(self, k: int, phase: str, message: str) -> None:
        best = self.best
        self.on_progress(
            LoopProgress(k, self.settings.rounds, phase, best[2] if best else None, message, best[0] if best else None)
        )

    def _evaluate(self, source: str, kind: EvaluationKind = "full") -> tuple[Evaluation | None, float, str]:
        """On the first free device, and that device; None when the run was stopped before one was free."""
        t0 = time.perf_counter()
        evaluation, device = self.devices.evaluate(source, kind, self._halt)
        return evaluation, time.perf_counter() - t0, device

    def _with_profile(self, rec: RoundRecord, stage: str = "expansion") -> RoundRecord:
        """`rec` profiled and judged again, once per node however many branches expand it at once (the others
        wait for the first): the Coder's prompt gets measured evidence. `stage`: what its stages are named
        after ("ahead": a device was idle, nobody expanded it yet)."""
        if not self._wants_profile(rec):
            return rec
        with self._lock:
            running = self._profiled.get(rec.index)
            if running is None:
                mine: Future[RoundRecord] = Future()
                self._profiled[rec.index] = mine
        if running is not None:
            return running.result()
        out = rec
        try:
            assert rec.source is not None and rec.evaluation is not None
            profiled, secs, _ = self._evaluate(rec.source, "profile")
            if profiled is not None and profiled.correct and not profiled.profiles:
                self._no_profiles = True
            if profiled is not None and (profiled.profiles or profiled.notes):
                old = rec.evaluation
                # the profile's own stages (its wait for the lease among them), apart from the evaluation's
                expansion = tuple((f"{stage}: {name}", s) for name, s in profiled.stages)
                evaluation = replace(old, profiles=profiled.profiles, notes=(*old.notes, *profiled.notes),
                                     stages=(*old.stages, *expansion))
                out = replace(rec, evaluation=evaluation, verdict=self._judge(rec.source, evaluation, list(rec.cheats)),
                              seconds_eval=rec.seconds_eval + secs)
        finally:
            mine.set_result(out)
        return out

    def _wants_profile(self, rec: RoundRecord) -> bool:
        return self._profile_on_expand and not self._no_profiles and needs_profile(rec)

    def _profile_ahead(self, tree: SearchTree, ahead: ThreadPoolExecutor, running: list[Future]) -> None:
        """With `profile_ahead`: while a device is idle and nothing is profiled ahead, the fastest correct node
        that wants a profile and has none under way is profiled in the background (`_refresh_profiled` then
        puts it in the tree; an expansion of it meanwhile waits for that profile instead of making its own)."""
        running[:] = [f for f in running if not f.done()]
        if running or not self.devices.idle():
            return
        with self._lock:
            under_way = set(self._profiled)
        options = [r for r in tree.candidates()
                   if r.index not in under_way and r.speedup is not None and self._wants_profile(r)]
        if options:
            best = max(options, key=lambda r: (r.speedup or 0.0, -r.index))
            running.append(ahead.submit(self._with_profile, best, "ahead"))

    def _refresh_profiled(self, tree: SearchTree) -> None:
        """Nodes whose profile has come in replace their first record (the loop's own thread owns the tree)."""
        for index, future in list(self._profiled.items()):
            rec = future.result() if future.done() else None
            if rec is not None and rec is not tree.nodes.get(index):
                tree.nodes[index] = rec
                self._record(rec)

    def _judge(self, source: str, evaluation: Evaluation | None, cheats: list[CheatFinding]) -> Verdict:
        return judge(
            judge_input(evaluation, self.kernel, self.findings_for(source), cheats=cheats, gpu=self.gpu)
        )

    def _over_budget(self) -> bool:
        s = self.settings
        return (
            (s.budget_usd is not None and self.usage.cost_usd >= s.budget_usd)
            or (s.budget_tokens is not None and self.usage.total_tokens >= s.budget_tokens)
            or self._out_of_time()
        )

    def _out_of_time(self) -> bool:
        limit = self.settings.budget_seconds
        return limit is not None and time.monotonic() - self._started >= limit

    def _ask(self, k: int, kind: RoundKind, last: RoundRecord, method: str | None
             ) -> tuple[str | None, Usage, str, float]:
        """The Coder's next file for node k, or the reason there is none."""
        details = ""
        if last.evaluation is not None:
            details = last.evaluation.compile.log or last.evaluation.correctness.traceback
        verdict = last.verdict
        if verdict is not None and method is not None and method != verdict.method:
            m = METHODS[method]  # the search asks for another of the methods that fit this bottleneck
            verdict = replace(verdict, method=m.key, method_title=m.title, plan=m.plan)
        ctx = PromptContext(self.reference, last.source, self.gpu, verdict, details)
        messages = repair_messages(ctx) if kind == "repair" else optimize_messages(ctx)
        usage = Usage()
        t0 = time.perf_counter()
        for attempt in range(self.settings.no_code_retries + 1):
            reply = self.coder.complete(messages, cancel=self._halt)
            usage = usage + reply.usage
            with self._lock:
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
                if self._over_budget() or self._halt.is_set():
                    break
                messages = no_code_followup(messages, reply.text, error)
        return None, usage, error, time.perf_counter() - t0

    def _expand(self, k: int, e: Expansion, parent: RoundRecord) -> tuple[RoundRecord | None, _Outcome]:
        """One branch step, in a worker thread: ask the Coder about `parent`, evaluate and judge the reply."""
        label = f"round {k}/{self.settings.rounds}"
        if self.policy.name != "chain":
            label += f" (from #{e.parent}{', ' + e.method if e.method else ''})"
        method = e.method
        if e.kind == "optimize" and self._wants_profile(parent):
            self._progress(k, "evaluating", f"{label}: profiling #{parent.index} before asking about it")
            predicted = parent.verdict
            parent = self._with_profile(parent)
            if self._halt.is_set():
                return None, "cancelled"
            if predicted is not None and parent.verdict is not None and method == predicted.method:
                method = parent.verdict.method  # the Judge's first choice, now from measured evidence
        self._progress(k, "coding", f"{label}: asking the Coder ({e.kind})")
        try:
            candidate, usage, error, llm_s = self._ask(k, e.kind, parent, method)
        except CoderCancelled:
            return None, "cancelled"
        except CoderError as exc:
            return RoundRecord(k, e.kind, None, None, None, error=str(exc), parent=e.parent, method=method), (
                "coder-error"
            )
        if candidate is None:
            rec = RoundRecord(k, e.kind, None, None, None, usage=usage, error=error, seconds_llm=llm_s,
                              parent=e.parent, method=method)
            return rec, "no-code"
        key = normalised_key(candidate)
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                mine: Future[RoundRecord | None] = Future()
                self._seen[key] = mine
        if seen is not None:  # the same candidate again: its evaluation, not a second one
            original = seen.result()
            if original is None:
                return None, "cancelled"
            return replace(original, index=k, kind=e.kind, source=candidate, usage=usage, seconds_eval=0.0,
                           seconds_llm=llm_s, parent=e.parent, method=method, duplicate_of=original.index), "ok"
        rec = None
        try:
            rec = self._evaluate_round(k, replace(e, method=method), label, candidate, usage, llm_s)
        finally:
            mine.set_result(rec)
            if rec is None:  # stopped before it ran: a later identical reply is evaluated after all
                with self._lock:
                    self._seen.pop(key, None)
        return (rec, "ok") if rec is not None else (None, "cancelled")

    # -- the search --------------------------------------------------------------------------------------
    def run(self, source: str) -> OptimizeResult:
        self._started = time.monotonic()
        if self.run_root is not None:
            secret = self.coder.settings.api_key()
            self.log = RunLog(self.run_root, self.kernel or "model", (secret,) if secret else ())
        tree = SearchTree()
        width = self.policy.width
        stop: StopReason | None = None
        asked = stale = 0
        detail = ""
        inflight: dict[Future, int] = {}
        ahead, profiling_ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cudalens-ahead"), []
        with ahead, ThreadPoolExecutor(max_workers=width, thread_name_prefix="cudalens-branch") as pool:
            first = self._watched(pool.submit(self._round_zero, source))
            tree.add(first)
            self._record(first)
            if (machine := machine_failure(first.evaluation)) is not None:
                stop, detail = "machine", machine
            while True:
                self._halt_if_stopped()
                self._refresh_profiled(tree)
                if stop is None:
                    stop = self._should_stop(tree, stale * 1.0 / width, asked)
                if stop is None and asked < self.settings.rounds and len(inflight) < width:
                    for e in self.policy.select(tree, min(width - len(inflight), self.settings.rounds - asked)):
                        asked += 1
                        tree.pending[asked] = e
                        inflight[pool.submit(self._expand, asked, e, tree.nodes[e.parent])] = asked
                if not inflight:
                    break
                if self.settings.profile_ahead and stop is None and asked < self.settings.rounds:
                    self._profile_ahead(tree, ahead, profiling_ahead)
                done, _ = wait(inflight, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in done:
                    k = inflight.pop(future)
                    rec, outcome = future.result()
                    tree.pending.pop(k, None)
                    if rec is None:  # halted before it ran: a cancel, or the wall-time budget
                        stop = stop or ("cancelled" if self.cancel.is_set() else "budget")
                        continue
                    tree.add(rec)
                    self._record(rec)
                    if outcome == "coder-error":
                        if stop is None:
                            stop, detail = "coder-error", rec.error
                        continue
                    # no repair fixes the machine (no GPU, no CUDA toolkit): every branch would fail the same way
                    if stop is None and (machine := machine_failure(rec.evaluation)) is not None:
                        stop, detail = "machine", machine
                    improved = self._consider(rec)
                    # "no progress" means the best stopped improving; while nothing is correct yet, repairs go on
                    if outcome == "no-code" or (not improved and self.best is not None):
                        stale += 1
                    elif improved:
                        stale = 0
                    if self.cancel.is_set():
                        stop = stop or "cancelled"
        self._refresh_profiled(tree)
        if stop is None:
            stop = "budget" if self._over_budget() else "rounds" if asked >= self.settings.rounds else "no-progress"
            if stop == "rounds" and self.settings.repair_only and any(_correct(r) for r in tree.nodes.values()):
                stop = "repaired"
        best = self.best
        result = OptimizeResult(
            source,
            best[1] if best else None,
            best[0] if best else None,
            best[2] if best else None,
            stop,
            [tree.nodes[i] for i in sorted(tree.nodes)],
            self.usage,
            self.log.folder if self.log else None,
            self.policy.name,
            detail,
        )
        if self.log:
            _write_summary(self.log, result, self.kernel)
        self._progress(len(result.rounds) - 1, "done", result.summary_line())
        return result

    def _halt_if_stopped(self) -> None:
        """On cancel or past the wall-time budget: stop every branch — the Coder's waits, the devices' jobs.
        Pressed again on each turn, so a job that was only starting when the cancel came is killed too."""
        if self.cancel.is_set() or self._out_of_time():
            self._halt.set()
            self.devices.cancel()

    def _watched(self, future: Future[RoundRecord]) -> RoundRecord:
        while True:
            done, _ = wait([future], timeout=0.2)
            if done:
                return future.result()
            self._halt_if_stopped()

    def _should_stop(self, tree: SearchTree, stale_rounds: float, asked: int) -> StopReason | None:
        if self.cancel.is_set():
            return "cancelled"
        if self._over_budget():
            return "budget"
        if self.settings.repair_only and any(_correct(r) for r in tree.nodes.values()):
            return "repaired"
        if stale_rounds >= self.settings.patience:
            return "no-progress"
        return None

    def _round_zero(self, source: str) -> RoundRecord:
        if "class ModelNew" not in source:
            return RoundRecord(0, "initial", None, None, None, error="the file has no ModelNew yet")
        self._progress(0, "evaluating", f"round 0/{self.settings.rounds}: evaluating the current kernel")
        policy = AntiCheatPolicy(
            self.settings.anti_cheat.require_custom_kernel, True, self.settings.anti_cheat.reference_dtype
        )
        # the user's own kernel is judged, not rejected: only warnings from the anti-cheat checks
        cheats = [replace(c, severity="warn") for c in check_candidate(source, policy, python_ast.parse)]
        evaluation, secs, device = self._evaluate(source)
        rec = RoundRecord(
            0,
            "initial",
            source,
            evaluation,
            self._judge(source, evaluation, []),
            tuple(cheats),
            seconds_eval=secs,
            device=device,
        )
        done: Future[RoundRecord | None] = Future()
        done.set_result(rec)
        self._seen[normalised_key(source)] = done
        self._consider(rec)
        return rec

    def _evaluate_round(
        self, k: int, e: Expansion, label: str, candidate: str, usage: Usage, llm_s: float
    ) -> RoundRecord | None:
        cheats = check_candidate(candidate, self.settings.anti_cheat, python_ast.parse)
        if rejected(cheats):
            return RoundRecord(
                k, e.kind, candidate, None, self._judge(candidate, None, cheats), tuple(cheats), usage,
                seconds_llm=llm_s, parent=e.parent, method=e.method,
            )
        if self._halt.is_set():
            return None
        self._progress(k, "evaluating", f"{label}: compiling, testing, timing")
        evaluation, secs, device = self._evaluate(candidate, "time" if self._profile_on_expand else "full")
        if evaluation is None:
            return None
        cheats = [*cheats, *(c for c in evaluation.correctness.cheats if c not in cheats)]  # the run-time ones too
        verdict = self._judge(candidate, evaluation, cheats)
        return RoundRecord(k, e.kind, candidate, evaluation, verdict, tuple(cheats), usage, "", secs, llm_s,
                           e.parent, e.method, device=device)

    def _consider(self, rec: RoundRecord) -> bool:
        speed = rec.speedup
        if speed is None or rec.source is None or rec.duplicate_of is not None:  # the original holds the best
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
        if rec.evaluation is not None and rec.duplicate_of is None:
            files["evaluation.json"] = rec.evaluation
        files["round.json"] = {
            "index": rec.index,
            "parent": rec.parent,
            "kind": rec.kind,
            "method": rec.method,
            "duplicate_of": rec.duplicate_of,
            "device": rec.device,
            "speedup": rec.speedup,
            "error": rec.error,
            "cheats": list(rec.cheats),
            "usage": rec.usage,
            "seconds_eval": rec.seconds_eval,
            "seconds_llm": rec.seconds_llm,
        }
        self.log.write_round(rec.index, files)


def needs_profile(rec: RoundRecord) -> bool:
    """A correct GPU candidate evaluated without its ncu profile (a leaf of a beam or tree search so far)."""
    e = rec.evaluation
    return (rec.source is not None and e is not None and e.correct and e.device.startswith("cuda")
            and not e.profiles and not any(n.startswith("ncu") for n in e.notes))


def _correct(rec: RoundRecord) -> bool:
    return rec.evaluation is not None and rec.evaluation.correct


def _messages_text(messages: list[dict[str, str]]) -> str:
    return "\n\n".join(f"# {m['role']}\n\n{m['content']}" for m in messages)


def _write_summary(log: RunLog, result: OptimizeResult, kernel: str | None) -> None:
    rows = []
    for r in result.rounds:
        status = status_of(r) if r.duplicate_of is None else f"duplicate of {r.duplicate_of}"
        rows.append(
            {
                "round": r.index,
                "parent": r.parent,
                "kind": r.kind,
                "method": r.method,
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
        "search": result.search,
        "stop_reason": result.stop_reason,
        "stop_detail": result.stop_detail,
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
        "| round | kind | status | speedup | verdict | tokens | cost $ | eval s | LLM s | from |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        speed = f"{row['speedup']:.2f}×" if row["speedup"] else ""
        lines.append(
            f"| {row['round']} | {row['kind']} | {row['status']} | {speed} | "
            f"{str(row['verdict']).replace('|', '/')} | {row['tokens']} | {row['cost_usd']:.4f} | "
            f"{row['seconds_eval']:.1f} | {row['seconds_llm']:.1f} | "
            f"{'' if row['parent'] is None else row['parent']} |"
        )
    lines += ["", f"## Search tree ({result.search})", "", "```", result.tree(), "```"]
    lines += ["", "Each `round-NN/` folder holds the round's source, prompt, reply, verdict and evaluation."]
    log.write("summary.md", "\n".join(lines) + "\n")
