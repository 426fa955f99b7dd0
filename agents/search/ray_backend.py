"""Evaluations on an existing Ray cluster (`cudalens optimize --ray ADDRESS`), for more GPUs than one
host has. The Coder, the tree and the policies stay in this process; each slot of the search is a Ray actor
holding one GPU (`num_gpus=1`, so Ray's own scheduling keeps two evaluations off one GPU) for the run, with the
profiler's evaluator on the node that got it; an evaluation is a call to it that sends back the typed
`Evaluation`. Nothing of this process's environment travels with a call: the Coder's key stays here.

Ray is an optional extra (`pip install 'cudalens[ray]'`); it is imported only when a run asks for it.
"""

from __future__ import annotations

import os
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
from cudalens.profiler.processes import Cancelled, CancelToken


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


_REMOTE: dict[str, Any] = {}  # the remote function and actor class, made once Ray is imported


def _build_here(source: str, timeout: float, gpus: bool) -> tuple[str, bool]:
    """A Ray task on one node (`gpus`: one of the cluster's GPU nodes): the candidate's extensions built into that
    node's cache (profiler/prebuild.py, nothing run on its GPU), and the node's id with whether it built."""
    import ray

    from cudalens.profiler.prebuild import prebuild_source

    # Ray hides the GPUs from a task that asks for none; torch builds for the GPU it sees (an actor's would be
    # built for sm_90a on an H200), so the build sees the node's first, where it only asks its architecture
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    if hidden == "" and gpus:
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
    try:
        build = prebuild_source(source, python=sys.executable, timeout=timeout)
    finally:
        if hidden is not None:
            os.environ["CUDA_VISIBLE_DEVICES"] = hidden
    return ray.get_runtime_context().get_node_id(), build.ok


def build_on_every_node(source: str, settings: RaySettings, timeout: float,
                        cancel: CancelToken | None = None) -> list[tuple[str, bool]]:
    """Builds the candidate ahead on every node with a slot's resources (GPUs, or CPUs on a CPU-only cluster), at
    once: whichever actor gets it then finds it in its node's cache, and its GPU is not held while it builds.
    The tasks ask for no CPU (`num_cpus=0`): the actors hold what the nodes have; the caller bounds how many run."""
    ray = _ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    kind = "GPU" if settings.gpus_per_task > 0 else "CPU"
    nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(kind, 0) > 0]
    if "build" not in _REMOTE:
        _REMOTE["build"] = ray.remote(max_retries=0)(_build_here)
    refs = [_REMOTE["build"].options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
            .remote(source, timeout, kind == "GPU") for node in nodes]
    while ray.wait(refs, num_returns=len(refs), timeout=0.2)[1]:  # `cancel` cancels the tasks still building
        if cancel is not None and cancel.cancelled:
            for ref in refs:
                ray.cancel(ref, force=True)
            raise Cancelled("the build ahead was cancelled")
    return list(ray.get(refs))


class NodeEvaluator:
    """The Ray actor behind one slot: a `ProfilerEvaluator` living on the node that got its GPU (its worker the
    node's own interpreter, with cudalens and torch), kept for the run like a local device's — torch imported
    once, the warm ncu targets kept — instead of one started and ended for every candidate. Threaded (two
    calls at once), so that `cancel` reaches the evaluation in flight."""

    def __init__(self, reference: str, settings: ProfilerEvaluatorSettings) -> None:
        import ray

        # the GPU Ray gave this actor (its CUDA_VISIBLE_DEVICES), named as a local device's is: the worker's
        # warm-up then makes the CUDA context and the header, and round 0 warms its ncu targets, as on a host
        gpu = os.environ.get("CUDA_VISIBLE_DEVICES") if ray.get_gpu_ids() else None
        self.evaluator = ProfilerEvaluator(reference, replace(settings, python=sys.executable, visible_device=gpu or None))
        self.evaluator.warm()
        self.node = ray.get_runtime_context().get_node_id()

    def evaluate(self, source: str, kind: EvaluationKind) -> Evaluation:
        evaluation = self.evaluator.evaluate(source, kind)
        return replace(evaluation, notes=(*evaluation.notes, f"ray node {self.node[:12]}"))

    def cancel(self) -> None:
        self.evaluator.cancel()

    def close(self) -> None:
        self.evaluator.close()


def _actor_class(ray: Any) -> Any:
    if "actor" not in _REMOTE:
        _REMOTE["actor"] = ray.remote(max_restarts=0, max_task_retries=0, max_concurrency=2)(NodeEvaluator)
    return _REMOTE["actor"]


@dataclass
class RayEvaluator:
    """A `CandidateEvaluator` whose evaluations run in a Ray actor holding one GPU (`gpus_per_task`) of the
    cluster for the run; one slot of `DeviceLeases` per GPU. Started at the first evaluation; an actor that died
    (its node lost, its process killed) is replaced at the next. `cancel` kills the job in flight; `close` ends
    the actor, its worker and its ncu targets."""

    reference_source: str
    settings: ProfilerEvaluatorSettings
    ray_settings: RaySettings
    _actor: Any = field(default=None, init=False, repr=False)
    _stop: threading.Event | None = field(default=None, init=False, repr=False)  # set by cancel() for the call
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def _node_evaluator(self, ray: Any) -> Any:
        with self._lock:  # the secrets to hide travel as names (settings.secret_env), never as values
            if self._actor is None:
                self._actor = _actor_class(ray).options(
                    num_gpus=self.ray_settings.gpus_per_task, num_cpus=self.ray_settings.cpus_per_task
                ).remote(self.reference_source, self.settings)
            return self._actor

    def evaluate(self, source: str, kind: EvaluationKind = "full") -> Evaluation:
        ray = _ray()
        actor = self._node_evaluator(ray)
        stop = threading.Event()
        with self._lock:
            self._stop = stop
        ref = actor.evaluate.remote(source, kind)
        try:
            # after a cancel the call has a few seconds to end (its job killed); one that has not begun (an actor
            # not yet placed: no free GPU) is left to close(), and the branch goes on
            waited = 0.0
            while not ray.wait([ref], timeout=0.2)[0]:
                waited = waited + 0.2 if stop.is_set() else 0.0
                if waited >= 10:
                    return Evaluation(source_hash(source), CompileOutcome(ok=True),
                                      CorrectnessOutcome("crashed", message="cancelled before the Ray actor began"))
            return ray.get(ref)
        except ray.exceptions.RayError as exc:
            if isinstance(exc, ray.exceptions.RayActorError):
                with self._lock:  # the next evaluation starts another
                    self._actor = None if self._actor is actor else self._actor
            message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            return Evaluation(source_hash(source), CompileOutcome(ok=True),
                              CorrectnessOutcome("crashed", message=f"the Ray evaluation failed: {message}"[:300]))
        finally:
            with self._lock:
                self._stop = None

    def cancel(self) -> None:
        """Kills the job the actor runs, and lets the call in flight go (see evaluate); returns once the actor has
        taken the cancel (one still on its way must not land on the evaluation after this one), or after 2 s (an
        actor that is not up has nothing to kill)."""
        with self._lock:
            actor, stop = self._actor, self._stop
        if stop is not None:
            stop.set()
        if actor is None:
            return
        try:
            _ray().get(actor.cancel.remote(), timeout=2)
        except Exception:
            pass

    def close(self) -> None:
        with self._lock:
            actor, self._actor = self._actor, None
        if actor is None:
            return
        ray = _ray()
        try:
            ray.get(actor.close.remote(), timeout=10)  # an actor never placed answers nothing
        except Exception:  # a dead or stuck actor: killed below all the same
            pass
        ray.kill(actor)
