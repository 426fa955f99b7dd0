"""An honest Coder stand-in for measuring the optimize search: a local OpenAI-compatible server (the tests'
`FakeOpenAI`) whose reply to a prompt is a random mutation of the candidate the prompt is about, drawn from a
family of real kernels with known trade-offs — an elementwise ReLU (block size, vector width, items per
thread), a row softmax (threads per row, exp flavour, rows per block) and a sum over a dimension (block size,
columns per thread, unroll) — some of them wrong (a classic bug) and some failing (a compile error).

It measures the machinery — how fast a policy finds the best variant, per evaluation and per wall second, and
how many candidates a minute the devices get through — never an LLM's skill. Each candidate carries its
parameters in a comment (`// standin: {...}`), which is how the stand-in reads the parent back from the prompt.

    python benchmarks/search_standin.py [--problems 19_ReLU,23_Softmax,47_Sum] [--policies chain,beam,tree]
        [--evaluations 24] [--width 8] [--llm-seconds 10] [--no-profile] [--profile-ahead] [--timing-check] [--cpu]
        [--out DIR]
        [--ray 127.0.0.1:6379]

`--cpu` runs a CPU family (a PyTorch row sum, chunked) so that the machinery runs without a GPU. Prints one row
per (problem, policy): best speedup, the best variant, evaluations, duplicates, wrong, failing, wall time,
candidates per minute (over the whole run, and after round 0, whose cold builds a fresh machine pays once); with
`--timing-check`, the best candidate timed alone against its time under the search.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from optimize_problems import (  # noqa: E402
    _BLOCK_ROW,
    HEAD,
    RELU_LAUNCH,
    RELU_REF,
    SOFTMAX_LAUNCH,
    SOFTMAX_REF,
    SUM_LAUNCH,
    SUM_REF,
    _file,
)

from cudalens.agents.coder.settings import CoderSettings  # noqa: E402
from cudalens.agents.gpu_specs import DEFAULT_GPU  # noqa: E402
from cudalens.agents.optimize_loop import LoopSettings, OptimizeResult  # noqa: E402
from cudalens.agents.optimize_run import OptimizeRun, OptimizeSpec  # noqa: E402
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings  # noqa: E402
from cudalens.agents.search.ray_backend import RaySettings  # noqa: E402
from cudalens.worker.child.anti_cheat import AntiCheatPolicy  # noqa: E402
from tests.agents.fake_openai import FakeOpenAI, Scripted, reply  # noqa: E402
from tests.agents.kernelbench_cpu import REFERENCE as ROW_SUM_REF  # noqa: E402

Params = dict[str, int]
MARK = re.compile(r"standin: (\{[^}]*\})")


@dataclass(frozen=True)
class Family:
    """A problem's variants: one value per axis, rendered to a KernelBench file; `flaw` "wrong" or "fail"."""

    name: str
    reference: str  # the reference file (Model, get_inputs)
    axes: dict[str, tuple[int, ...]]
    start: Params
    render: Callable[[Params, str], str]
    # which axis a Judge method moves (method key → axis); other methods move a random axis
    steers: dict[str, str] = field(default_factory=dict)
    cpu: bool = False

    def source(self, params: Params, flaw: str = "") -> str:
        return self.render(params, flaw)


def _relu(p: Params, flaw: str) -> str:
    vec, items, block = p["vec"], p["items"], p["block"]
    vtype = {1: "float", 2: "float2", 4: "float4"}[vec]
    lanes = ("x", "y", "z", "w")[:vec] if vec > 1 else ()
    op = "v > 0.f ? v : 0.01f * v" if flaw == "wrong" else "fmaxf(v, 0.f)"
    if lanes:
        body = "; ".join(f"{{ float v = a.{c}; a.{c} = {op}; }}" for c in lanes)
    else:
        body = f"{{ float v = a; a = {op}; }}"
    kernel = f"""// standin: {json.dumps(p)}
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {{
    long per_block = (long){block} * {items} * {vec};
    long base = (long)blockIdx.x * per_block + (long)threadIdx.x * {vec};
    #pragma unroll
    for (int k = 0; k < {items}; ++k) {{
        long i = base + (long)k * {block} * {vec};
        if (i + {vec} <= n) {{
            {vtype} a = *reinterpret_cast<const {vtype}*>(x + i);
            {body}
            *reinterpret_cast<{vtype}*>(y + i) = a;
        }} else {{
            for (long j = i; j < n; ++j) {{ float v = x[j]; y[j] = {op}; }}
        }}
    }}
}}
"""
    per = block * items * vec
    launch = f"relu_kernel<<<(n + {per} - 1) / {per}, {block}>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);"
    if flaw == "fail":
        launch = launch.replace("n);", "n)")  # a missing semicolon: the build fails
    return _file(RELU_REF, f"cl_relu_{_tag(p, flaw)}", kernel + RELU_LAUNCH.replace("LAUNCH", launch))


def _softmax(p: Params, flaw: str) -> str:
    threads, fast_exp = p["threads"], p["fast_exp"]
    # optimize_problems' block-per-row kernel, with this variant's exp and (unless wrong) its normalisation
    kernel = f"// standin: {json.dumps(p)}" + _BLOCK_ROW.replace("__expf", "__expf" if fast_exp else "expf")
    if flaw == "wrong":
        kernel = kernel.replace(" * inv;", ";")
    launch = f"softmax_kernel<<<rows, {threads}>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);"
    if flaw == "fail":
        launch = launch.replace("rows, cols);", "rows, cols, 0);")  # too many arguments
    return _file(SOFTMAX_REF, f"cl_softmax_{_tag(p, flaw)}", kernel + SOFTMAX_LAUNCH.replace("LAUNCH", launch))


def _sum(p: Params, flaw: str) -> str:
    block, cols, unroll = p["block"], p["cols"], p["unroll"]
    limit = "n - 1" if flaw == "wrong" else "n"
    kernel = f"""// standin: {json.dumps(p)}
__global__ void sum_kernel(const float* __restrict__ x, float* __restrict__ y, int n, int m) {{
    int bi = blockIdx.y;
    int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * {cols};
    if (c0 >= m) return;
    const float* p = x + (size_t)bi * n * m + c0;
    float acc[{cols}];
    #pragma unroll
    for (int k = 0; k < {cols}; ++k) acc[k] = 0.f;
    #pragma unroll {unroll}
    for (int i = 0; i < {limit}; ++i) {{
        #pragma unroll
        for (int k = 0; k < {cols}; ++k) if (c0 + k < m) acc[k] += p[(size_t)i * m + k];
    }}
    #pragma unroll
    for (int k = 0; k < {cols}; ++k) if (c0 + k < m) y[(size_t)bi * m + c0 + k] = acc[k];
}}
"""
    per = block * cols
    launch = (f"sum_kernel<<<dim3((m + {per} - 1) / {per}, b), {block}>>>(x.data_ptr<float>(), "
              "y.data_ptr<float>(), n, m);")
    if flaw == "fail":
        kernel = kernel.replace("acc[k] = 0.f;", "acc[k] = zero;")  # an undeclared name
    return _file(SUM_REF, f"cl_sum_{_tag(p, flaw)}", kernel + SUM_LAUNCH.replace("LAUNCH", launch))


def _row_sum_cpu(p: Params, flaw: str) -> str:
    """CPU torch: columns summed `chunk` at a time, rows `rows` at a time (Python overhead per step)."""
    chunk, rows = p["chunk"], p["rows"]
    scale = " * 1.01" if flaw == "wrong" else ""
    broken = "        raise RuntimeError('standin: this variant fails')\n" if flaw == "fail" else ""
    return ROW_SUM_REF + f'''

# standin: {json.dumps(p)}
class ModelNew(nn.Module):
    def forward(self, x):
{broken}        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for r in range(0, x.shape[0], {rows}):
            for c in range(0, x.shape[1], {chunk}):
                out[r:r + {rows}] += x[r:r + {rows}, c:c + {chunk}].sum(dim=1){scale}
        return out
'''


def _tag(p: Params, flaw: str) -> str:
    return "_".join(str(v) for v in p.values()) + (f"_{flaw}" if flaw else "")


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("19_ReLU", HEAD + RELU_REF,
               {"block": (32, 64, 128, 256, 512, 1024), "vec": (1, 2, 4), "items": (1, 2, 4, 8)},
               {"block": 64, "vec": 1, "items": 1}, _relu,
               {"vectorize-memory-access": "vec", "increase-parallelism": "block", "hide-memory-latency": "items"}),
        Family("23_Softmax", HEAD + SOFTMAX_REF,
               {"threads": (32, 64, 128, 256, 512, 1024), "fast_exp": (0, 1)},
               {"threads": 32, "fast_exp": 0}, _softmax,
               {"increase-parallelism": "threads", "hide-memory-latency": "threads",
                "reduce-instruction-count": "fast_exp"}),
        Family("47_Sum", HEAD + SUM_REF,
               {"block": (32, 64, 128, 256, 512, 1024), "cols": (1, 2, 4), "unroll": (1, 2, 4, 8)},
               {"block": 32, "cols": 1, "unroll": 1}, _sum,
               {"increase-parallelism": "block", "vectorize-memory-access": "cols",
                "hide-memory-latency": "unroll"}),
        Family("row_sum_cpu", ROW_SUM_REF, {"chunk": (1, 4, 16, 64, 256, 512), "rows": (1, 8, 64)},
               {"chunk": 1, "rows": 1}, _row_sum_cpu, {"vectorize-memory-access": "chunk",
                                                       "increase-parallelism": "rows"}, cpu=True),
    )
}


class StandIn:
    """The responder: reads the candidate and the Judge's method from the prompt, answers with a mutation of
    it (one axis one step), a wrong variant (`p_wrong`) or a failing one (`p_fail`); a repair prompt gets the
    parent's parameters without the flaw. Seeded by the prompt's text and how often it came; like a sampled LLM
    asked about one candidate with different methods, it does not give the same variant of a parent twice while
    its one-step neighbours last (so concurrent requests make the answers depend on their order)."""

    def __init__(self, family: Family, seed: int = 0, p_wrong: float = 0.15, p_fail: float = 0.1,
                 llm_seconds: float = 0.0) -> None:
        self.family, self.seed, self.p_wrong, self.p_fail = family, seed, p_wrong, p_fail
        self.llm_seconds = llm_seconds
        self._asked: dict[str, int] = {}
        self._given: dict[str, set[str]] = {}  # a parent's parameters → the variants already answered for it
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Scripted:
        prompt = "\n".join(m.get("content", "") for m in body.get("messages", []))
        digest = hashlib.sha256(prompt.encode()).hexdigest()
        with self._lock:
            n = self._asked[digest] = self._asked.get(digest, 0) + 1
        rng = random.Random(f"{self.seed}:{digest}:{n}")
        repair = "This candidate is wrong" in prompt
        section = prompt.split("## Failing candidate" if repair else "## Current candidate", 1)
        found = MARK.search(section[1]) if len(section) == 2 else None
        params = dict(self.family.start)
        if found:
            params.update({k: int(v) for k, v in json.loads(found.group(1)).items() if k in params})
        if repair and found:  # the parent without its flaw, mostly
            return self._reply(self.family.source(params, "" if rng.random() < 0.8 else "wrong"))
        params = self._mutate(params, prompt, rng)
        roll = rng.random()
        flaw = "wrong" if roll < self.p_wrong else "fail" if roll < self.p_wrong + self.p_fail else ""
        return self._reply(self.family.source(params, flaw))

    def _mutate(self, params: Params, prompt: str, rng: random.Random) -> Params:
        """One axis one step: the method's axis first, else a random one, mostly upwards; the first of those
        not yet answered for this parent, then (all given) the nearest variant two or three steps away that was
        not; the first of all when every one was."""
        steered = next((a for m, a in self.family.steers.items() if m in _methods_named(prompt)), None)
        layer, options = [params], []
        for _ in range(3):
            layer = [n for p in layer for n in self._neighbours(p, steered, rng) if n != params and n not in options]
            options += layer
        with self._lock:
            given = self._given.setdefault(json.dumps(params, sort_keys=True), set())
            choice = next((o for o in options if json.dumps(o, sort_keys=True) not in given), options[0])
            given.add(json.dumps(choice, sort_keys=True))
        return choice

    def _neighbours(self, params: Params, first: str | None, rng: random.Random) -> list[Params]:
        """`params` one step away on each axis: `first` (the method's axis) first, the others shuffled."""
        others = [a for a in self.family.axes if a != first]
        rng.shuffle(others)
        out = []
        for axis in ([first] if first else []) + others:
            values = self.family.axes[axis]
            i = values.index(params[axis]) if params[axis] in values else 0
            out += [{**params, axis: values[i + d]} for d in rng.choice(((1, -1), (1, -1), (-1, 1)))
                    if 0 <= i + d < len(values)]
        return out

    def _reply(self, source: str) -> Scripted:
        text = f"Here is the variant.\n\n```python\n{source}```\n"
        return reply(text, delay_s=self.llm_seconds, prompt_tokens=3000, completion_tokens=len(source) // 4)


class Replay:
    """The responder of a run replayed: the replies a chain got, in the order it asked (`round-NN/reply.md` of
    its run log), whatever the prompts now say. A chain asks one request at a time, so the replayed run evaluates
    the same candidates in the same order; where a path's measured times differ, the prompts may differ, the
    candidates do not."""

    def __init__(self, run: Path, llm_seconds: float = 0.0) -> None:
        self.replies = [f.read_text() for f in sorted(run.glob("round-*/reply.md"))]
        if not self.replies:
            raise SystemExit(f"search_standin: {run} holds no round-NN/reply.md to replay")
        self.llm_seconds, self._next, self._lock = llm_seconds, 0, threading.Lock()

    def __call__(self, body: dict) -> Scripted:
        with self._lock:
            k, self._next = self._next, self._next + 1
        text = self.replies[k] if k < len(self.replies) else "Nothing more to replay."
        return reply(text, delay_s=self.llm_seconds, prompt_tokens=3000, completion_tokens=len(text) // 4)


def best_of_run(run: Path) -> tuple[int | None, str]:
    """A run log's best round and the best candidate's parameters (its `// standin:` mark)."""
    summary = json.loads((run / "summary.json").read_text())
    best = summary.get("best_round")
    source = run / f"round-{best:02d}" / "source.py" if best is not None else None
    found = MARK.search(source.read_text()) if source is not None and source.exists() else None
    return best, found.group(1) if found else "-"


def _methods_named(prompt: str) -> set[str]:
    from cudalens.agents.judge.methods import METHODS

    return {key for key, m in METHODS.items() if m.title in prompt}


@dataclass
class Row:
    problem: str
    policy: str
    best_speedup: float | None
    best_params: str
    evaluations: int
    duplicates: int
    wrong: int
    failing: int
    wall_s: float
    best_ms: float | None
    result: OptimizeResult | None = None
    first_s: float = 0.0  # round 0: the starting file's evaluation (on a fresh machine: the cold builds)

    def where_the_time_went(self) -> str:
        """Seconds by evaluation stage over the run (a stage holds a GPU's lease, but for "profile on
        expansion", which includes its wait for one), the failing builds' share, and the Coder's."""
        if self.result is None:
            return ""
        stages: dict[str, float] = {}
        failing = llm = 0.0
        for node in self.result.rounds:
            llm += node.seconds_llm
            if node.evaluation is None or node.duplicate_of is not None:
                continue
            for stage, secs in node.evaluation.stages:
                stages[stage] = stages.get(stage, 0.0) + secs
            if not node.evaluation.compile.ok:
                failing += node.seconds_eval
        parts = [f"{name} {secs:.1f} s" for name, secs in stages.items()]
        requests = len(self.result.rounds) - 1
        return (f"time: {', '.join(parts)}; failing candidates {failing:.1f} s (building ahead included); "
                f"Coder {llm:.1f} s over {requests} requests; {self.devices_busy()}")

    def devices_busy(self) -> str:
        """How much of the search's own time (after round 0) its devices were held: the stages under a lease
        (all but the builds ahead and the waits for a lease), over the wall time after round 0 times the devices."""
        assert self.result is not None
        held = sum(secs for node in self.result.rounds[1:] if node.evaluation is not None and node.duplicate_of is None
                   for name, secs in node.evaluation.stages if "build ahead" not in name and "lease wait" not in name)
        devices = len({node.device for node in self.result.rounds if node.device}) or 1
        rest = (self.wall_s - self.first_s) * devices
        return f"devices held {held:.1f} s of {rest:.1f} s after round 0 ({held / rest:.0%} busy)" if rest > 0 else ""

    @property
    def per_minute(self) -> float:
        return 60 * self.evaluations / self.wall_s if self.wall_s else 0.0

    @property
    def per_minute_after_first(self) -> float:
        """The search's own pace: the wall time after round 0, when the Coder's requests begin."""
        rest = self.wall_s - self.first_s
        return 60 * self.evaluations / rest if rest > 0 else 0.0


def run_one(family: Family, policy: str, args: argparse.Namespace, runs: Path) -> Row:
    key = "CUDALENS_STANDIN_KEY"
    import os

    os.environ.setdefault(key, "sk-standin-not-a-real-key")
    width = 1 if policy == "chain" else args.width
    start = family.source(family.start)
    with tempfile.TemporaryDirectory(prefix="cudalens-standin-") as tmp:
        path = Path(tmp) / f"{family.name}.py"
        path.write_text(start)
        replay = getattr(args, "replay", None)
        responder = (Replay(Path(replay), args.llm_seconds) if replay
                     else StandIn(family, args.seed, llm_seconds=args.llm_seconds))
        with FakeOpenAI(responder=responder) as fake:
            spec = OptimizeSpec(
                str(path), start, None,
                CoderSettings(base_url=fake.base_url, model="standin", api_key_env=key),
                LoopSettings(rounds=args.evaluations, patience=10_000, search=policy, width=width,
                             profile_ahead=getattr(args, "profile_ahead", False),
                             anti_cheat=AntiCheatPolicy(require_custom_kernel=not family.cpu,
                                                        allow_torch_compute=family.cpu)),
                ProfilerEvaluatorSettings(device="cpu" if family.cpu else None, profile=not args.no_profile,
                                          timeout_s=args.timeout, budget_ms=args.budget_ms),
                gpu=DEFAULT_GPU if family.cpu else None, runs_dir=runs, cpu_slots=args.cpu_slots,
                build_ahead=False if family.cpu or args.no_build_ahead else None,  # None: as `cudalens optimize`
                ray=RaySettings(args.ray, gpus_per_task=0 if family.cpu else 1, node_ip="127.0.0.1")
                if getattr(args, "ray", None) else None,
            )
            t0 = time.perf_counter()
            run = OptimizeRun(spec)
            try:
                result = run.run()
            finally:
                run.close()
            wall = time.perf_counter() - t0
    nodes = result.rounds[1:]
    evaluated = [n for n in nodes if n.evaluation is not None and n.duplicate_of is None]
    best = result.rounds[result.best_round] if result.best_round is not None else None
    marks = MARK.search(best.source or "") if best else None
    timing = best.evaluation.timing if best and best.evaluation else None
    return Row(
        family.name, policy, result.best_speedup, marks.group(1) if marks else "-", len(evaluated),
        sum(n.duplicate_of is not None for n in nodes),
        sum(1 for n in evaluated if n.evaluation.compile.ok and not n.evaluation.correct),
        sum(1 for n in evaluated if not n.evaluation.compile.ok),
        wall, timing.candidate.median if timing else None, result, result.rounds[0].seconds_eval,
    )


def timed_alone(family: Family, source: str, args: argparse.Namespace) -> float | None:
    """The candidate's median time from an evaluator of its own, nothing else running."""
    evaluator = ProfilerEvaluator(
        family.reference, ProfilerEvaluatorSettings(device="cpu" if family.cpu else None, profile=False,
                                                    timeout_s=args.timeout, budget_ms=args.budget_ms))
    try:
        evaluation = evaluator.evaluate(source, "time")
    finally:
        evaluator.close()
    return evaluation.timing.candidate.median if evaluation.timing else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", default="19_ReLU,23_Softmax,47_Sum")
    parser.add_argument("--policies", default="chain,beam,tree")
    parser.add_argument("--evaluations", type=int, default=24, help="candidates each policy may ask for")
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--llm-seconds", type=float, default=10.0, help="the stand-in's delay per reply")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-profile", action="store_true", help="no ncu profile of correct candidates")
    parser.add_argument("--no-build-ahead", action="store_true", help="build under the GPU lease, not before")
    parser.add_argument("--profile-ahead", action="store_true",
                        help="profile correct candidates while a GPU is idle, not when first expanded")
    parser.add_argument("--timing-check", action="store_true", help="time each best candidate alone again")
    parser.add_argument("--cpu", action="store_true", help="the CPU family (row_sum_cpu), no GPU needed")
    parser.add_argument("--cpu-slots", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--budget-ms", type=float, default=100.0)
    parser.add_argument("--ray", metavar="ADDRESS", help="evaluate in Ray actors on this (loopback) cluster")
    parser.add_argument("--out", default=None, help="where the run logs go (default: a temporary folder)")
    parser.add_argument("--replay", metavar="RUN", help="a chain's run folder: its replies again, in order, and "
                        "whether this run's best is that run's")
    args = parser.parse_args(argv)
    names = ["row_sum_cpu"] if args.cpu else [p for p in args.problems.split(",") if p]
    if args.replay and (args.policies != "chain" or len(names) != 1):
        parser.error("--replay replays one chain: give --policies chain and the one problem it ran")
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        parser.error(f"unknown problem(s) {', '.join(unknown)}; known: {', '.join(FAMILIES)}")
    runs = Path(args.out or tempfile.mkdtemp(prefix="cudalens-standin-runs-"))
    print(f"stand-in Coder (mutations of real kernels; measures the machinery, not an LLM): "
          f"{args.evaluations} candidates a policy, width {args.width}, {args.llm_seconds:g} s a reply; logs {runs}")
    print(f"{'problem':<12} {'policy':<6} {'best':>7} {'evals':>5} {'dup':>4} {'wrong':>5} {'fail':>4} "
          f"{'wall s':>7} {'cand/min':>8} {'after #0':>8}  best variant")
    ok = True
    for name in names:
        family = FAMILIES[name]
        for policy in [p for p in args.policies.split(",") if p]:
            row = run_one(family, policy, args, runs)
            best = f"{row.best_speedup:.2f}×" if row.best_speedup else "-"
            print(f"{row.problem:<12} {row.policy:<6} {best:>7} {row.evaluations:>5} {row.duplicates:>4} "
                  f"{row.wrong:>5} {row.failing:>4} {row.wall_s:>7.1f} {row.per_minute:>8.1f} "
                  f"{row.per_minute_after_first:>8.1f}  {row.best_params}",
                  flush=True)
            print(f"{'':<12} {row.where_the_time_went()}", flush=True)
            if args.replay and row.result is not None:
                was, params = best_of_run(Path(args.replay))
                same = was == row.result.best_round
                ok = ok and same
                print(f"{'':<12} replayed {args.replay}: best round {row.result.best_round} {row.best_params}, "
                      f"that run's {was} {params}: {'the same' if same else 'DIFFERENT'}", flush=True)
            if args.timing_check and row.result and row.result.best_source and row.best_ms:
                alone = timed_alone(family, row.result.best_source, args)
                if alone:
                    drift = row.best_ms / alone - 1
                    ok = ok and abs(drift) <= 0.03
                    print(f"{'':<12} timing: {row.best_ms:.4f} ms under the search, {alone:.4f} ms alone "
                          f"({drift:+.1%}; goal within 3 %)", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
