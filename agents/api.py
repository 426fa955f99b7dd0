"""What the server and the CLI call: verdicts for an analysed document, CL910 findings, "Ask Coder about this".

The optimize loop itself is `cudalens.agents.optimize_loop.OptimizeLoop`; "Fix with Coder" is the same loop with
`LoopSettings(repair_only=True)`.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.extract import code_blocks
from cudalens.agents.coder.prompts import ask_messages
from cudalens.agents.coder.usage import Usage
from cudalens.agents.evaluation import Evaluation
from cudalens.agents.gpu_specs import DEFAULT_GPU, GpuSpecs
from cudalens.agents.judge import Verdict, judge, judge_input
from cudalens.agents.judge.render import render_markdown, verdict_findings
from cudalens.agents.optimize_loop import OptimizeLoop, OptimizeResult
from cudalens.analysis.api import AnalysisReport, KernelInfo
from cudalens.analysis.findings import Finding


@dataclass(frozen=True)
class KernelVerdict:
    kernel: KernelInfo
    verdict: Verdict

    @property
    def markdown(self) -> str:
        return render_markdown(self.verdict)


def kernel_verdicts(
    report: AnalysisReport, gpu: GpuSpecs = DEFAULT_GPU, evaluation: Evaluation | None = None
) -> list[KernelVerdict]:
    """One verdict per kernel of the document: measured where `evaluation` profiled it, else predicted."""
    out = []
    for k in report.kernels:
        own = tuple(f for f in report.findings if f.kernel == k.name)
        out.append(KernelVerdict(k, judge(judge_input(evaluation, k.name, own, k, gpu=gpu))))
    return out


def judge_findings(
    report: AnalysisReport, gpu: GpuSpecs = DEFAULT_GPU, evaluation: Evaluation | None = None
) -> list[Finding]:
    """The verdicts as CL910 findings on each kernel's name."""
    return [
        f
        for kv in kernel_verdicts(report, gpu, evaluation)
        for f in verdict_findings(kv.verdict, report.path, kv.kernel.name_span)
    ]


@dataclass(frozen=True)
class Suggestion:
    explanation: str
    code: str | None  # the proposed replacement for the lines shown, when the reply has one
    usage: Usage


def ask_coder(
    client: CoderClient,
    about: str,
    code: str,
    path: str,
    first_line: int,
    language: str = "cuda",
    gpu: GpuSpecs = DEFAULT_GPU,
    cancel: threading.Event | None = None,
) -> Suggestion:
    """One targeted suggestion for one spot (a finding or a verdict): an explanation and a proposed edit."""
    reply = client.complete(ask_messages(gpu, about, code, path, first_line, language), cancel=cancel)
    blocks = code_blocks(reply.text)
    explanation = reply.text
    if blocks:
        start = reply.text.find("```") if "```" in reply.text else reply.text.find("~~~")
        explanation = reply.text[:start].strip() or reply.text.strip()
    return Suggestion(explanation, blocks[-1].text if blocks else None, reply.usage)


async def optimize_async(loop: OptimizeLoop, source: str) -> OptimizeResult:
    """Run the loop off the event loop. Cancelling the awaiting task sets the loop's cancel event, which kills
    the candidate in flight and ends the run ("cancelled"); the task then re-raises CancelledError. Progress
    callbacks arrive on the loop's thread: marshal them with `call_soon_threadsafe`."""
    task = asyncio.ensure_future(asyncio.to_thread(loop.run, source))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        loop.cancel.set()
        await asyncio.wait([task])  # the run stops within a step: nothing is left behind
        raise
