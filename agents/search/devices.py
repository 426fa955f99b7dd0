"""Per-device leases: one evaluator per device (a GPU of `CUDA_VISIBLE_DEVICES`, or a CPU slot where there is no
GPU), and a candidate holds a device's lease while it is tested, timed and profiled, so two timings or two ncu
runs never share a GPU (timings that overlap are wrong). Candidates wait for the first device that is free.

Building is not timing: `build`, when given, runs before the lease on up to `build_slots` candidates at once (the
CPU cores), so that a candidate arrives at its GPU with its extension already in the build cache; a cancel kills
the builds in flight through the token it is given.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from cudalens.agents.evaluation import CandidateEvaluator, Evaluation, EvaluationKind
from cudalens.profiler.processes import CancelToken


def visible_gpus(environ: dict[str, str] | None = None, count: int | None = None) -> list[str]:
    """The GPUs this process may use, as `CUDA_VISIBLE_DEVICES` names them (indices or UUIDs); unset: the first
    `count` (what nvidia-smi reported); an empty or "-1" value: none."""
    env = os.environ if environ is None else environ
    value = env.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return [str(i) for i in range(count or 0)]
    names = [v.strip() for v in value.split(",") if v.strip()]
    visible = []
    for name in names:
        if name.startswith("-"):  # CUDA stops at the first invalid entry
            break
        visible.append(name)
    return visible


@dataclass
class Lease:
    device: str
    evaluator: CandidateEvaluator


class DeviceLeases:
    def __init__(
        self,
        evaluators: Sequence[CandidateEvaluator],
        devices: Sequence[str] | None = None,
        build: Callable[[str, CancelToken], None] | None = None,
        build_slots: int | None = None,
    ) -> None:
        if not evaluators:
            raise ValueError("DeviceLeases needs at least one evaluator")
        names = list(devices or [f"slot{i}" for i in range(len(evaluators))])
        self.leases = [Lease(d, e) for d, e in zip(names, evaluators, strict=True)]
        self._free: queue.Queue[Lease] = queue.Queue()
        for lease in self.leases:
            self._free.put(lease)
        self._build = build
        self._build_slots = threading.BoundedSemaphore(max(1, build_slots or os.cpu_count() or 1))
        self._waiting = 0  # evaluations waiting for a lease now
        self._waiting_lock = threading.Lock()
        self._cancel_builds = CancelToken()  # cancel(): the builds ahead in flight are killed too

    @property
    def size(self) -> int:
        return len(self.leases)

    def evaluate(
        self, source: str, kind: EvaluationKind = "full", halt: threading.Event | None = None
    ) -> tuple[Evaluation | None, str]:
        """The evaluation on the first free device and that device's name; (None, "") when `halt` was set
        before a device was free."""
        halt = halt or threading.Event()
        before: list[tuple[str, float]] = []
        if self._build is not None and kind != "profile":  # a profile's candidate was built for its test
            with self._build_slots:
                if halt.is_set():
                    return None, ""
                started = time.perf_counter()
                try:
                    self._build(source, self._cancel_builds)
                except Exception:  # a build ahead only warms the cache: the evaluation reports the failure
                    pass
                before.append(("build ahead", time.perf_counter() - started))
        waiting = time.perf_counter()
        with self._waiting_lock:
            self._waiting += 1
        try:
            while True:
                try:
                    lease = self._free.get(timeout=0.1)
                    break
                except queue.Empty:
                    if halt.is_set():
                        return None, ""
        finally:
            with self._waiting_lock:
                self._waiting -= 1
        before.append(("lease wait", time.perf_counter() - waiting))
        try:
            if halt.is_set():
                return None, ""
            evaluation = lease.evaluator.evaluate(source, kind)
        finally:
            self._free.put(lease)
        # where a candidate's time went, the lease's wait included (the search's pace is the GPUs' busy time)
        return replace(evaluation, stages=(*before, *evaluation.stages)), lease.device

    def idle(self) -> bool:
        """A lease is free and no evaluation is waiting for one (a candidate building ahead is not counted)."""
        with self._waiting_lock:
            return self._waiting == 0 and not self._free.empty()

    def cancel(self) -> None:
        """Kill whatever each device is running, and the builds ahead."""
        self._cancel_builds.cancel()
        for lease in self.leases:
            killer = getattr(lease.evaluator, "cancel", None)
            if killer is not None:
                killer()

    def close(self) -> None:
        for lease in self.leases:
            closer = getattr(lease.evaluator, "close", None)
            if closer is not None:
                closer()
