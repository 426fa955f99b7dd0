"""One optimize run built from typed settings: the one place that composes the loop. `cudalens optimize` and the
server's "Optimize kernel" / "Fix with Coder" both describe a run as an `OptimizeSpec` and call `OptimizeRun`.

Evaluations run one per device (agents/search/devices.py): an evaluator, with its own worker, for each GPU of
`CUDA_VISIBLE_DEVICES` (all that nvidia-smi lists when it is unset), or `cpu_slots` of them without a GPU; with
`ray`, in Ray actors on a cluster (agents/search/ray_backend.py), one slot per GPU it has.
The run owns what it starts (the evaluators' workers and warm ncu targets): `close()` ends them, and
`run_async` is how an event loop awaits it — cancelling the awaiting task stops the run and every candidate in
flight before the CancelledError goes on.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.evaluation import CandidateEvaluator
from cudalens.agents.gpu_specs import GpuSpecs, detect_gpu_specs
from cudalens.agents.optimize_loop import LoopProgress, LoopSettings, OptimizeLoop, OptimizeResult
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from cudalens.agents.resources import WithCompileResources, compile_resources
from cudalens.agents.search.devices import DeviceLeases, visible_gpus
from cudalens.agents.search.ray_backend import (
    RayEvaluator,
    RaySettings,
    RayUnavailable,
    build_on_every_node,
    connect,
)
from cudalens.analysis.api import analyze_text
from cudalens.analysis.findings import Finding
from cudalens.profiler.gpu_specs import gpu_count
from cudalens.profiler.prebuild import BuildWorkers
from cudalens.profiler.processes import CancelToken


@dataclass(frozen=True)
class OptimizeSpec:
    """What one run is: the file, the kernel, and the typed settings of each part."""

    path: str
    source: str
    kernel: str | None = None  # None: the file's model (its stem)
    coder: CoderSettings = field(default_factory=CoderSettings)
    loop: LoopSettings = field(default_factory=LoopSettings)
    evaluator: ProfilerEvaluatorSettings = field(default_factory=ProfilerEvaluatorSettings)
    gpu: GpuSpecs | None = None  # None: this machine's (asks nvidia-smi: build the run off an event loop)
    runs_dir: Path | None = None  # None: no run log
    cpu_slots: int = 1  # evaluations at once where there is no GPU (or the evaluator's device is "cpu")
    # build each candidate's extensions (and its ptxas resources) on a CPU core before its GPU lease; None: when
    # the search has several candidates in flight (width > 1), whose builds then overlap one another's GPU time
    build_ahead: bool | None = None
    ray: RaySettings | None = None  # evaluations in Ray actors on this cluster instead of this host's GPUs


def _builds_ahead(spec: OptimizeSpec) -> bool:
    """When set, or when several candidates are in flight (on this host's CPUs, or on each Ray node's)."""
    return spec.build_ahead if spec.build_ahead is not None else spec.loop.width > 1 and spec.loop.search != "chain"


def devices_for(spec: OptimizeSpec) -> list[str]:
    """One evaluator per visible GPU; CPU slots where there is none or the evaluator is told to use the CPU."""
    gpus = [] if spec.evaluator.device == "cpu" else visible_gpus(count=gpu_count())
    return gpus or [f"cpu{i}" for i in range(max(1, spec.cpu_slots))]


def local_evaluator(source: str, settings: ProfilerEvaluatorSettings, device: str) -> ProfilerEvaluator:
    """The evaluator of one of devices_for's slots, as a run makes it: on a GPU it sees only that one and warms
    up for it (the CUDA context, the precompiled header, the first ncu target), and its worker starts now, so
    that it comes up while round 0 builds. The benchmarks make theirs here too."""
    gpu = settings.device != "cpu" and not device.startswith("cpu")
    evaluator = ProfilerEvaluator(source, replace(settings, visible_device=device if gpu else None))
    evaluator.warm()
    return evaluator


class OptimizeRun:
    def __init__(
        self, spec: OptimizeSpec, on_progress: Callable[[LoopProgress], None] | None = None
    ) -> None:
        self.spec = spec
        # the Coder's key never reaches candidate code, whatever the evaluator's settings name
        secrets = tuple(dict.fromkeys((*spec.evaluator.secret_env, spec.coder.api_key_env)))
        settings = replace(spec.evaluator, secret_env=secrets, allow_torch_ops=spec.loop.anti_cheat.allow_torch_compute)
        if spec.ray is not None:  # one slot per task the cluster runs at once; Ray places them on GPUs
            slots = connect(spec.ray)
            if slots < 1:
                raise RayUnavailable(f"cudalens: the Ray cluster at {spec.ray.address} has no free GPU")
            self.devices = [f"ray{i}" for i in range(slots)]
            self.evaluators: list[CandidateEvaluator] = [
                RayEvaluator(spec.source, settings, spec.ray) for _ in self.devices
            ]
        else:
            self.devices = devices_for(spec)
            self.evaluators = [local_evaluator(spec.source, settings, d) for d in self.devices]
        # warm build workers (torch imported once, a fork per candidate) for the builds ahead on this host
        self.builders = (BuildWorkers(min(spec.loop.width, os.cpu_count() or 1), python=settings.python,
                                      timeout=settings.timeout_s, start="load_inline" in spec.source)
                         if _builds_ahead(spec) and spec.ray is None else None)
        self.leases = DeviceLeases(
            [WithCompileResources(e, spec.path) for e in self.evaluators], self.devices,
            build=self._build_ahead if _builds_ahead(spec) else None,
        )
        self.loop = OptimizeLoop(
            self.leases,
            CoderClient(spec.coder),
            spec.source,
            kernel=spec.kernel or Path(spec.path).stem,
            gpu=spec.gpu or detect_gpu_specs(),
            settings=spec.loop,
            cancel=threading.Event(),
            on_progress=on_progress,
            run_root=spec.runs_dir,
            findings_for=self._findings_for,
        )

    def _findings_for(self, candidate: str) -> list[Finding]:
        kernel = self.spec.kernel
        report = analyze_text(self.spec.path, candidate)
        return [f for f in report.findings if kernel is None or f.kernel in (None, kernel)]

    def _build_ahead(self, source: str, cancel: CancelToken) -> None:
        """The candidate's `load_inline` extensions built into the cache in a process of their own, and its
        ptxas resources compiled into the profiler's build cache beside it, so that the evaluation under the GPU
        lease finds both built (WithCompileResources then reads the cache)."""
        resources = threading.Thread(target=compile_resources, args=(self.spec.path, source), daemon=True)
        resources.start()
        if "load_inline" in source and self.spec.ray is not None:  # on the nodes, whichever actor gets it
            build_on_every_node(source, self.spec.ray, self.spec.evaluator.timeout_s, cancel)
        elif "load_inline" in source and self.builders is not None:
            self.builders.build_source(source, cancel)
        resources.join()

    def run(self) -> OptimizeResult:
        return self.loop.run(self.spec.source)

    def stop(self) -> None:
        """Stop the run: no new candidate, every candidate in flight killed."""
        self.loop.cancel.set()
        self.leases.cancel()

    def close(self) -> None:
        self.leases.close()
        if self.builders is not None:
            self.builders.close()

    async def run_async(self) -> OptimizeResult:
        """The run in a thread. On cancel: the cancel event, and the evaluator's kill switch pressed until the
        run has stopped — a candidate whose job was only starting when the cancel came is killed too."""
        future = asyncio.ensure_future(asyncio.to_thread(self.run))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            while not future.done():
                self.stop()
                await asyncio.wait([future], timeout=0.2)
            raise
