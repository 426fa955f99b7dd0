"""One optimize run built from typed settings: the one place that composes the loop. `cudalens optimize` and the
server's "Optimize kernel" / "Fix with Coder" both describe a run as an `OptimizeSpec` and call `OptimizeRun`.

The run owns what it starts (the evaluator's workers and warm ncu targets): `close()` ends them, and
`run_async` is how an event loop awaits it — cancelling the awaiting task stops the run and every candidate in
flight before the CancelledError goes on.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.gpu_specs import GpuSpecs, detect_gpu_specs
from cudalens.agents.optimize_loop import LoopSettings, OptimizeLoop, OptimizeResult, Progress
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from cudalens.agents.resources import WithCompileResources
from cudalens.analysis.api import analyze_text
from cudalens.analysis.findings import Finding


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


class OptimizeRun:
    def __init__(
        self, spec: OptimizeSpec, on_progress: Callable[[Progress], None] | None = None
    ) -> None:
        self.spec = spec
        # the Coder's key never reaches candidate code, whatever the evaluator's settings name
        secrets = tuple(dict.fromkeys((*spec.evaluator.secret_env, spec.coder.api_key_env)))
        self.evaluator = ProfilerEvaluator(spec.source, replace(spec.evaluator, secret_env=secrets))
        self.loop = OptimizeLoop(
            WithCompileResources(self.evaluator, spec.path),
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

    def run(self) -> OptimizeResult:
        return self.loop.run(self.spec.source)

    def stop(self) -> None:
        """Stop the run: no new candidate, the one in flight killed."""
        self.loop.cancel.set()
        self.evaluator.cancel()

    def close(self) -> None:
        self.evaluator.close()

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
