"""What a save after an edit does without a GPU, on two trees of cudalens, alternating (issue 39's rebuild row).

Each tree runs in its own processes (verification_cost.py's `run_in`: `import cudalens` resolved to the tree).
The builds of both share one scratch cache (XDG_CACHE_HOME; the servers another), warmed by a first build, so the
bindings and the precompiled header are there and each figure is an edit's rebuild. Per pair, before then after:

- `build`: a fresh interpreter imports torch and torch.utils.cpp_extension (a worker's start), then builds two
  edited copies of tests/runtime/data/transpose.cu as the `test` job does (problem_loader.compile_cuda's fast
  build, fast_inline.fast_load_inline): the first build in the process and a later one (a warm worker's). With
  CPU torch (no GPU here) the split and the compiles run and the link to torch's CUDA libraries fails: the
  figure is those, not the import of the module. Wall and CPU seconds (the process and the compilers: what the
  other users of a shared machine change less), and the ninja steps that ran;
- `server`: the real language server (`python -m cudalens.server`, a stand-in `nvidia-smi` on PATH that names an
  H200, so that the server sends the test job), the file opened and built ahead, then edits saved one after the
  other: didSave → the progress report "testing…" (the server's own path, up to the job going to the worker) and
  didSave → the progress's end (the worker's queue and the job, whose build stops at once here: the worker's CPU
  torch has no CUDA home); and the worker's start and warm-up (torch's import) as the pool logs them.

    python benchmarks/save_path_cpu.py --before /tmp/cl-before [--after .] [--pairs 5] [--saves 3] [--no-server]

Prints each run as it ends, the machine's load average before it, and the medians per tree.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verification_cost import importable, run_in

SCRIPT = Path(__file__).resolve()
DATA = SCRIPT.parents[1] / "tests" / "runtime" / "data"
FAKE_SMI = "#!/bin/sh\necho 'NVIDIA H200, 9.0, 143771, 1980, 580.159.04'\n"


def edited(text: str) -> str:
    """The benchmarks' edit (server_gpu_save.py's): a comment in the kernel, a new text each time."""
    return text.replace("if (r < rows", f"/* edit {uuid.uuid4().hex[:8]} */ if (r < rows", 1)


def cpu_seconds() -> float:
    """CPU time of this process and of the children it waited for (ninja, nvcc, g++): what a busy machine's load
    changes less than the wall time."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def ninja_steps(root: Path, before: dict[Path, int] | None = None) -> dict[Path, int] | list[str]:
    """The lanes' ninja logs' lengths, or (given those) what ran since: "TARGET S" per compile or link."""
    logs = {log: log.read_text().splitlines() for log in root.glob("*/lane*/.ninja_log")}
    if before is None:
        return {log: len(lines) for log, lines in logs.items()}
    ran = [line.split("\t") for log, lines in logs.items() for line in lines[before.get(log, 0):]]
    return [f"{r[3]} {(int(r[1]) - int(r[0])) / 1000:.1f}" for r in ran if len(r) >= 4]


def child_build(builds: int) -> dict:
    began = time.perf_counter()
    import torch
    import torch.utils.cpp_extension

    imported = time.perf_counter() - began
    from cudalens.worker.child.lib import fast_inline, problem_loader

    if torch.utils.cpp_extension.CUDA_HOME is None:  # CPU torch has no CUDA home of its own: the one in the env
        torch.utils.cpp_extension.CUDA_HOME = os.environ["CUDA_HOME"]

    path = DATA / "transpose.cu"
    text = path.read_text()
    seconds, cpu, ends, steps = [], [], [], []
    imported_cpu = cpu_seconds()
    for _ in range(builds):
        source = edited(text)
        start, start_cpu = time.perf_counter(), cpu_seconds()
        logs = ninja_steps(fast_inline.build_root())
        fast_name, kwargs = problem_loader.cuda_load_arguments(problem_loader.build_name(path, source), source,
                                                               problem_loader.host_functions(source), {})
        try:  # the `test` job's fast build (problem_loader.compile_cuda), without load_inline to fall back on
            fast_inline.fast_load_inline(torch.utils.cpp_extension.load_inline, fast_name, **kwargs)
            ends.append("built")
        except Exception as exc:  # CPU torch: the compiles run, the link to torch's CUDA libraries cannot
            ends.append(f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[-1][:120]}")
        seconds.append(time.perf_counter() - start)
        cpu.append(cpu_seconds() - start_cpu)
        steps.append(ninja_steps(fast_inline.build_root(), logs))
    return {"import": imported, "import_cpu": imported_cpu, "builds": seconds, "builds_cpu": cpu, "ends": ends,
            "steps": steps}


async def child_server(saves: int) -> dict:
    from lsprotocol import types
    from server_gpu_save import Client, on_save, save_and_wait

    folder = Path(tempfile.mkdtemp(prefix="cudalens-save-cpu-"))
    for name in ("transpose.cu", "transpose_ref.py"):
        shutil.copy(DATA / name, folder / name)
    path, uri = folder / "transpose.cu", (folder / "transpose.cu").as_uri()
    text = path.read_text()
    client = Client()
    began = time.perf_counter()
    await client.start_io(sys.executable, "-m", "cudalens.server", "--log-level", "info", env=dict(os.environ))
    caps = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
    await client.initialize_async(types.InitializeParams(
        capabilities=caps, root_uri=folder.as_uri(), initialization_options={"settings": on_save(test=True, time=True)},
    ))
    client.initialized(types.InitializedParams())
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "cuda-cpp", 1, text)))
    deadline = time.perf_counter() + 600
    while (ahead := next((at for at, m in client.logs if "ahead of its first save" in m), None)) is None:
        if time.perf_counter() > deadline:
            raise SystemExit("no build ahead in 600 s")
        await asyncio.sleep(0.05)  # log messages do not wake `client.until`
    result: dict = {"built_ahead": ahead - began, "to_job": [], "to_end": [], "ends": []}
    version = 1
    for i in range(saves + 1):  # the first save (unchanged text) is not counted: the server's first-run imports
        if i:
            version += 1
            text = edited(text)
            path.write_text(text)
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            ))
            await asyncio.sleep(1.0)  # the edit's analysis is done before the save, as in an editor
        reports = len(client.reports)
        started = time.perf_counter()
        seconds, end = await save_and_wait(client, uri)
        sent = next((at for at, m in client.reports[reports:] if m.startswith("testing")), None)
        if i:
            result["to_job"].append(None if sent is None else sent - started)
            result["to_end"].append(seconds)
            result["ends"].append(end)
    # the worker's start and torch's import, as the pool logs them ("worker started in S s, warm W s later (…)")
    started = next((re.search(r"started in ([\d.]+) s, warm ([\d.]+) s later", m)
                    for _, m in client.logs if "worker started in" in m), None)
    result["worker"] = [float(v) for v in started.groups()] if started else None
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    shutil.rmtree(folder, ignore_errors=True)
    return result


def child(args: argparse.Namespace) -> int:
    out = child_build(args.builds) if args.child == "build" else asyncio.run(child_server(args.saves))
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def in_tree(tree: Path, what: str, args: argparse.Namespace) -> dict:
    caches = os.environ["XDG_CACHE_HOME"]
    if what == "server":
        # a cache of its own: its worker's CPU torch knows no CUDA home, so its builds write a glue.cpp without the
        # precompiled header into the lane, and the next `build` would compile the glue again
        os.environ["XDG_CACHE_HOME"] = f"{caches}-server"
    try:
        out, took = run_in(tree, [str(SCRIPT), "--child", what, "--builds", str(args.builds), "--saves",
                                  str(args.saves)], timeout=900)
    finally:
        os.environ["XDG_CACHE_HOME"] = caches
    line = next((ln for ln in out.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"{tree} {what} failed:\n{out[-3000:]}")
    return {**json.loads(line[7:]), "wall": took}


def median(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    middle = statistics.median(values)
    return f"{middle:.3f}" if middle < 0.1 else f"{middle:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="the earlier tree")
    parser.add_argument("--after", default=str(SCRIPT.parents[1]))
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--builds", type=int, default=2, help="edited builds per `build` process")
    parser.add_argument("--saves", type=int, default=3, help="edited saves per server")
    parser.add_argument("--no-server", action="store_true")
    parser.add_argument("--child", choices=("build", "server"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if not args.before:
        parser.error("--before is required")
    trees = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    for tree in trees.values():
        importable(tree)
    scratch = Path(tempfile.mkdtemp(prefix="cudalens-save-path-"))
    (scratch / "bin").mkdir()
    smi = scratch / "bin" / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    os.environ["XDG_CACHE_HOME"] = str(scratch / "cache")
    if not os.environ.get("CUDA_HOME") and Path("/usr/local/cuda/include/cuda_runtime.h").exists():
        os.environ["CUDA_HOME"] = "/usr/local/cuda"  # CPU torch has none of its own (tests/runtime/test_early_build.py)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")  # the H200's, where no GPU says which
    os.environ["PATH"] = f"{scratch / 'bin'}{os.pathsep}{os.environ['PATH']}"
    start = time.monotonic()
    for side, tree in trees.items():  # the bindings and the precompiled header, once (same text: shared)
        warm = in_tree(tree, "build", args)
        print(f"warm-up build ({side}): {warm['builds']} s; {warm['ends']}", flush=True)
    kinds = ["build"] + ([] if args.no_server else ["server"])
    runs: dict[str, dict[str, list[dict]]] = {k: {s: [] for s in trees} for k in kinds}
    loads: dict[str, list[float]] = {s: [] for s in trees}
    for pair in range(args.pairs):
        for side, tree in trees.items():
            for kind in kinds:
                load = os.getloadavg()[0]
                loads[side].append(load)
                got = in_tree(tree, kind, args)
                runs[kind][side].append(got)
                if kind == "build":
                    print(f"pair {pair} {side:<6} build: import torch {got['import']:.2f} s, builds "
                          f"{', '.join(f'{b:.2f}' for b in got['builds'])} s, CPU "
                          f"{', '.join(f'{b:.2f}' for b in got['builds_cpu'])} s (load {load:.1f}); "
                          f"ninja: {got['steps']}", flush=True)
                else:
                    print(f"pair {pair} {side:<6} server: didSave→job sent {[round(s, 3) for s in got['to_job']]}, "
                          f"didSave→end {[round(s, 2) for s in got['to_end']]}, worker start + warm-up "
                          f"{got['worker']} (load {load:.1f})", flush=True)
    print(f"\n{args.pairs} pairs in {time.monotonic() - start:.0f} s; medians (s), each tree's runs alternating")
    print(f"{'figure':<58} {'before':>8} {'after':>8}")
    rows = [("load average (1 min) before a run", lambda s: loads[s])]
    rows += [("import torch, torch.utils.cpp_extension (in-process)",
              lambda s: [r["import"] for r in runs["build"][s]]),
             ("fast build of an edit, first in its process", lambda s: [r["builds"][0] for r in runs["build"][s]]),
             ("fast build of an edit, later in its process",
              lambda s: [b for r in runs["build"][s] for b in r["builds"][1:]]),
             ("  CPU seconds: import torch (process and children)",
              lambda s: [r["import_cpu"] for r in runs["build"][s]]),
             ("  CPU seconds: build, first in its process",
              lambda s: [r["builds_cpu"][0] for r in runs["build"][s]]),
             ("  CPU seconds: build, later in its process",
              lambda s: [b for r in runs["build"][s] for b in r["builds_cpu"][1:]])]
    if not args.no_server:
        rows += [("server's worker: start + warm-up (torch import)",
                  lambda s: [r["worker"][0] + r["worker"][1] for r in runs["server"][s] if r.get("worker")]),
                 ("server: didSave → test job sent", lambda s: [t for r in runs["server"][s] for t in r["to_job"]]),
                 ("server: didSave → end (the job, its build stopped)",
                  lambda s: [t for r in runs["server"][s] for t in r["to_end"]])]
    for label, values in rows:
        print(f"{label:<58} {median(values('before')):>8} {median(values('after')):>8}")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
