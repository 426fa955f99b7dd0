"""What swapping a kernel into a model costs on the host, per torch call, on a CPU (issue 36: the swap's own cost
≤ 1 % of a forward).

    PYTHONPATH=$PWD python benchmarks/swap_cost.py                  # this tree
    PYTHONPATH=$PWD python benchmarks/swap_cost.py --before 5ad2387   # and the checkout at a revision: before → after

For the GPT-2 block and the diffusion block of benchmarks/gpu_whole_model.py, at tiny sizes (each torch call
takes a few µs: a launch-bound forward, where the host's overhead shows in full), `cudalens model` writes a problem for the op
(`softmax`, `group_norm`) and the integration module swaps in a "kernel" that is the problem's own reference
(`class ModelNew(Model)`): the same arithmetic, so every difference is the swap's. It times, per forward
(median of blocks of forwards, single-threaded torch):

- the original model;
- `swap(model)` on inputs of another batch size: every call of the op falls back, so this is the cost of the
  checks alone (the "fallback" column, spread over every torch call the forward makes);
- `swap(model)` on the verified inputs: the kernel runs for each call of the op, so this adds the way into the
  kernel (the "swapped" column, per swapped call).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after PYTHONPATH: the checkout measured is the one PYTHONPATH names

from benchmarks.gpu_whole_model import DIFFUSION, TRANSFORMER  # noqa: E402
from cudalens import PARTS  # noqa: E402

# tiny sizes: every call takes a few µs, the forward is launch-bound and the swap's own cost shows in full
CASES = {
    "transformer": (TRANSFORMER, "softmax", "Block(dim=16, heads=2, context=8), [torch.randn(1, 8, 16)]"),
    "diffusion": (DIFFUSION, "group_norm", "ResBlock(8, 2), [torch.randn(1, 8, 4, 4)]"),
}
SAME_OP = "\n\nclass ModelNew(Model):\n    \"\"\"The problem's own reference: the swap's cost, not a kernel's.\"\"\"\n"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _per_forward_us(variants: dict, blocks: int, per_block: int) -> dict:
    """Each variant's CPU time per forward (this process's, so that other processes on a shared machine count
    less), the median over `blocks` blocks taken in turn (a drift in the machine's speed hits all alike)."""
    for forward in variants.values():
        for _ in range(per_block):
            forward()
    times: dict = {name: [] for name in variants}
    for _ in range(blocks):
        for name, forward in variants.items():
            began = time.process_time()
            for _ in range(per_block):
                forward()
            times[name].append((time.process_time() - began) / per_block * 1e6)
    return {name: statistics.median(t) for name, t in times.items()}


def _torch_calls(model, args) -> int:
    from torch.overrides import TorchFunctionMode

    class Count(TorchFunctionMode):
        n = 0

        def __torch_function__(self, func, types, a=(), kw=None):
            Count.n += 1
            return func(*a, **(kw or {}))

    with Count():
        model(*args)
    return Count.n


def measure(name: str, folder: Path, blocks: int, per_block: int) -> dict:
    import torch

    from cudalens.model import integration
    from cudalens.model.profile import profile_model

    source, op, tiny = CASES[name]
    path = folder / f"{name}.py"
    path.write_text(source + f"\n\ndef tiny():\n    return {tiny}\n")
    out = folder / name
    profile = profile_model(str(path), "tiny", device="cpu", out_dir=str(out), problems=0, names=(op,), iters=1,
                            warmup=1)
    for problem in map(Path, profile.problems):
        problem.with_suffix(".optimized.py").write_text(problem.read_text() + SAME_OP)
    accepted = integration.candidates(out)
    module = _load(integration.write(out, accepted, path.name, {a.name: ("eager",) for a in accepted}),
                   f"swap_cost_{name}")
    torch.manual_seed(0)
    model, inputs = _load(path, f"swap_cost_model_{name}").tiny()
    model.eval()
    other = [torch.cat([x, x[:1]]) for x in inputs]  # one more sample: no call matches what was verified
    fast = module.swap(model)
    with torch.no_grad():
        calls = _torch_calls(model, inputs)
        hits = sum(h for _, h, _ in module.counts())
        us = _per_forward_us({"before": lambda: model(*inputs), "swapped": lambda: fast(*inputs),
                              "before_other": lambda: model(*other), "fallback": lambda: fast(*other)},
                             blocks, per_block)
        per_fwd = (sum(h for _, h, _ in module.counts()) - hits) / (blocks * per_block + per_block)
        per_call = _per_call_us(module, op, blocks)
    before = us["before"]
    return {"name": name, "op": op, "calls": calls, "swapped_calls": per_fwd, "forward_us": before,
            "fallback_us": us["fallback"] - us["before_other"], "swapped_us": us["swapped"] - before, **per_call}


def _per_call_us(module, op: str, blocks: int, calls: int = 200) -> dict:
    """What one call costs more inside the swap than outside it, by itself: a call of another torch function,
    and a call of the swapped one that its check turns down (other shapes). The swap is entered once for
    `calls` calls, as a forward enters it once for all of its own."""
    import torch
    import torch.nn.functional as F

    small = torch.randn(1, 4, 2, 2)
    checked = {"softmax": lambda: F.softmax(small, dim=-1), "group_norm": lambda: F.group_norm(small, 2)}[op]
    swap = module.swapped()

    def block(call, inside: bool):
        def run():
            with swap if inside else contextlib.nullcontext():
                for _ in range(calls):
                    call()
        return run

    us = _per_forward_us({"other": block(lambda: torch.add(small, small), False),
                          "other_in": block(lambda: torch.add(small, small), True),
                          "checked": block(checked, False), "checked_in": block(checked, True)}, blocks, 5)
    return {"other_call_us": (us["other_in"] - us["other"]) / calls,
            "checked_call_us": (us["checked_in"] - us["checked"]) / calls}


def _rows(blocks: int, per_block: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        return [measure(name, Path(tmp), blocks, per_block) for name in CASES]


def _rows_at(rev: str, blocks: int, per_block: int) -> list[dict]:
    """The rows of `rev`'s checkout (`git archive`, laid out as a worktree), measured in a process of its own."""
    with tempfile.TemporaryDirectory() as tree:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        for part in PARTS:
            link = Path(tree) / "cudalens" / part
            if not link.exists():
                link.symlink_to(Path("..") / part)
        done = subprocess.run([sys.executable, __file__, "--json", "--blocks", str(blocks), "--per-block", str(per_block)],
                              env={**os.environ, "PYTHONPATH": tree}, capture_output=True, text=True, check=True)
        return json.loads(done.stdout)


def _per_swapped(r: dict) -> float:
    return r["swapped_us"] / r["swapped_calls"] if r["swapped_calls"] else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=31)
    parser.add_argument("--per-block", type=int, default=50)
    parser.add_argument("--before", metavar="REV", help="also measure the checkout at REV and print before → after")
    parser.add_argument("--json", action="store_true", help="the rows as JSON")
    args = parser.parse_args()
    import torch

    import cudalens.model

    torch.set_num_threads(1)
    if args.json:
        print(json.dumps(_rows(args.blocks, args.per_block)))
        return 0
    before = _rows_at(args.before, args.blocks, args.per_block) if args.before else None
    rows = _rows(args.blocks, args.per_block)
    print(f"cudalens from {Path(cudalens.model.__file__).parent.parent}; torch {torch.__version__}, 1 thread, CPU time")
    if before is not None:
        print(f"{'model':<12} {'op':<11} {'calls/fwd':>9} {'fwd µs':>6}  µs, {args.before} → now: {'checks a forward':>18}  "
              f"{'a call of another fn':>20}  {'a checked call':>15}  {'a swapped call':>16}")
        for old, new in zip(before, rows, strict=True):
            print(f"{new['name']:<12} {new['op']:<11} {new['calls']:>9} {new['forward_us']:>6.0f}  {'':>{len(args.before) + 10}}"
                  f"{old['fallback_us']:>7.1f} → {new['fallback_us']:>5.1f}  "
                  f"{old['other_call_us']:>11.2f} → {new['other_call_us']:>5.2f}  "
                  f"{old['checked_call_us']:>6.2f} → {new['checked_call_us']:>5.2f}  "
                  f"{_per_swapped(old):>7.1f} → {_per_swapped(new):>5.1f}")
        return 0
    print(f"{'model':<12} {'op':<11} {'calls/fwd':>9} {'fwd µs':>8} {'checks µs/fwd':>14} {'share':>6} "
          f"{'µs a call of another fn':>24} {'µs a checked call':>18} {'µs a swapped call':>18}")
    for r in rows:
        print(f"{r['name']:<12} {r['op']:<11} {r['calls']:>9} {r['forward_us']:>8.0f} {r['fallback_us']:>14.1f} "
              f"{r['fallback_us'] / r['forward_us']:>6.1%} {r['other_call_us']:>24.2f} {r['checked_call_us']:>18.2f} "
              f"{_per_swapped(r):>18.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
