"""Evaluations as Ray tasks on an existing Ray cluster (`cudalens optimize --ray ADDRESS`), for more GPUs than one
host has. The Coder, the tree and the policies stay in this process; each evaluation is a task asking for one GPU
(`num_gpus=1`, so Ray's own scheduling keeps two evaluations off one GPU) that runs the profiler's evaluator on
the node that got it and sends back the typed `Evaluation`. Nothing of this process's environment travels with a
task: the Coder's key stays here.

Ray is an optional extra (`pip install 'cudalens[ray]'`); it is imported only when a run asks for it.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from cudalens.agents.evaluation import (
    CompileOutcome,
    CorrectnessOutcome,
    Evaluation,
    EvaluationKind,
    source_hash,
)
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings


class RayUnavailable(RuntimeError):
    """Ray is not installed or the cluster cannot be reached; the message is one line, safe to show."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable("cudalens: --ray needs Ray: pip install 'cudalens[ray]'") from None
    return ray


@dataclass(frozen=True)
class RaySettings:
    address: str  # the cluster's, as `ray.init(address=...)` takes it ("auto", "host:6379", "ray://host:10001")
    gpus_per_task: float = 1.0  # 0 on a CPU-only cluster (the tests'), where each task takes `cpus_per_task`
    cpus_per_task: float = 1.0
    node_ip: str | None = None  # this process's address as the cluster sees it ("127.0.0.1" for a loopback one)


def connect(settings: RaySettings) -> int:
    """Join the cluster (once per process) and say how many evaluations it can run at once."""
    ray = _ray()
    if not ray.is_initialized():
        try:
            extra = {"_node_ip_address": settings.node_ip} if settings.node_ip else {}
            ray.init(address=settings.address, log_to_driver=False, logging_level="ERROR", **extra)
        except Exception as exc:  # ConnectionError, ValueError, ...: one line, never a traceback
            raise RayUnavailable(f"cudalens: cannot reach the Ray cluster at {settings.address}: {exc}") from None
    resources = ray.cluster_resources()
    if settings.gpus_per_task > 0:
        return int(resources.get("GPU", 0) // settings.gpus_per_task)
    return int(resources.get("CPU", 0) // max(settings.cpus_per_task, 1e-9))


def _evaluate_on_node(reference: str, settings: ProfilerEvaluatorSettings, source: str,
                      kind: EvaluationKind) -> Evaluation:
    """The task's body, on whichever node Ray chose: a fresh evaluator whose worker is the node's own
    interpreter (the one running this task, with cudalens and torch), ended however the task ends — a cancel
    arrives as KeyboardInterrupt and still closes it."""
    import ray

    evaluator = ProfilerEvaluator(reference, replace(settings, python=sys.executable))
    try:
        evaluation = evaluator.evaluate(source, kind)
    finally:
        evaluator.close()
    node = ray.get_runtime_context().get_node_id()
    return replace(evaluation, notes=(*evaluation.notes, f"ray node {node[:12]}"))


_REMOTE: dict[str, Any] = {}


def _remote(ray: Any) -> Any:
    if "evaluate" not in _REMOTE:
        _REMOTE["evaluate"] = ray.remote(max_retries=0)(_evaluate_on_node)
    return _REMOTE["evaluate"]


@dataclass
class RayEvaluator:
    """A `CandidateEvaluator` whose evaluations are Ray tasks; one slot of `DeviceLeases` per task the cluster
    can run at once. `cancel` cancels the task in flight (and its worker with it)."""

    reference_source: str
    settings: ProfilerEvaluatorSettings
    ray_settings: RaySettings
    _running: Any = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def evaluate(self, source: str, kind: EvaluationKind = "full") -> Evaluation:
        ray = _ray()
        task = _remote(ray).options(num_gpus=self.ray_settings.gpus_per_task,
                                    num_cpus=self.ray_settings.cpus_per_task)
        with self._lock:  # the secrets to hide travel as names (settings.secret_env), never as values
            ref = self._running = task.remote(self.reference_source, self.settings, source, kind)
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:
            cancelled = isinstance(exc, ray.exceptions.TaskCancelledError)
            message = "cancelled" if cancelled else str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
            return Evaluation(source_hash(source), CompileOutcome(ok=True),
                              CorrectnessOutcome("crashed", message=f"the Ray task failed: {message}"[:300]))
        finally:
            with self._lock:
                self._running = None

    def cancel(self) -> None:
        with self._lock:
            ref = self._running
        if ref is not None:
            _ray().cancel(ref)

    def close(self) -> None:
        self.cancel()
