"""A long editing session on one big .cu file, measured from an outside client over stdio (issue 34 item 6):

- didOpen → first diagnostics;
- N one-line edits, each a new text (a number typed into one kernel's line that grows with the edit count,
  so nothing is answered from a cache of an earlier version), each waiting for its diagnostics:
  edit → diagnostics median and p90 over all of them, and over the last quarter;
- the server's resident memory after 200, 1,000, 2,000, ... edits (a plateau once warm is the goal), and the
  CPU time it spent an edit (on a shared machine steadier than the wall-clock latencies);
- with `--tracemalloc`, the server runs under tracemalloc from the first edit on (`--frames` deep; many times
  slower) and dumps a snapshot after `--snapshots` edits (default 200 and the last), after a full collection;
  the script then prints the allocation sites that grew most between the first and the last. (Parse trees are
  allocated by tree-sitter's C code, which tracemalloc does not see: the Python objects that keep them alive
  do show.)

The file is benchmarks/big_cuda_file.py's, at `--lines` (default 20,000).

Run: python benchmarks/server_big_file_session.py [--lines 20000] [--edits 2000] [--tracemalloc]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))

from big_cuda_file import big_cuda_source
from server_latency import (
    EDIT_ANCHOR,
    Client,
    cpu_seconds,
    initialize,
    percentile,
    replace_line,
    rss_mib,
    shut_down,
)

# The server with tracemalloc at hand: SIGUSR2 starts tracing (after the open: tracing the first analysis of
# 20,000 lines takes minutes), SIGUSR1 dumps a snapshot to $SNAPSHOT_DIR/<n>.snap (after a full collection with
# $TRACE_COLLECT=1).
TRACED = (
    "import gc, os, signal, sys, tracemalloc\n"
    "signal.signal(signal.SIGUSR2, lambda signum, frame: tracemalloc.start(int(os.environ['TRACE_FRAMES'])))\n"
    "taken = [0]\n"
    "def dump(signum, frame):\n"
    "    if os.environ['TRACE_COLLECT'] == '1':\n"
    "        gc.collect()\n"
    "    taken[0] += 1\n"
    "    path = os.path.join(os.environ['SNAPSHOT_DIR'], f'{taken[0]}.snap')\n"
    "    tracemalloc.take_snapshot().dump(path + '.part')\n"
    "    os.replace(path + '.part', path)\n"
    "signal.signal(signal.SIGUSR1, dump)\n"
    "from cudalens.server.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


async def snapshot(pid: int, folder: Path, n: int) -> tracemalloc.Snapshot:
    os.kill(pid, signal.SIGUSR1)
    path = folder / f"{n}.snap"
    while not path.exists():
        await asyncio.sleep(0.2)
    return tracemalloc.Snapshot.load(str(path)).filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib._bootstrap>")])


def print_growth(first: tracemalloc.Snapshot, last: tracemalloc.Snapshot, edits: tuple[int, int],
                 top: int) -> None:
    total = sum(s.size for s in last.statistics("filename")) - sum(s.size for s in first.statistics("filename"))
    print(f"traced memory from edit {edits[0]} to edit {edits[1]}: {total / 1024:+.0f} KiB; the sites that grew most:")
    for stat in last.compare_to(first, "traceback")[:top]:
        if stat.size_diff <= 0:
            break
        print(f"  {stat.size_diff / 1024:+8.0f} KiB {stat.count_diff:+7d} blocks (now {stat.size / 1024:.0f} KiB)")
        for line in stat.traceback.format(limit=6, most_recent_first=True):
            print(f"      {line}")


async def run(lines: int, edits: int, checkpoints: list[int], traced: bool, snapshots: list[int], top: int,
              frames: int, collect: bool) -> None:
    text = big_cuda_source(lines)
    root = Path(tempfile.mkdtemp(prefix="cudalens-session-"))
    client = Client()
    args = ["--log-file", str(root / "server.log")]
    if traced:
        os.environ.update(SNAPSHOT_DIR=str(root), TRACE_FRAMES=str(frames), TRACE_COLLECT=str(int(collect)))
        await client.start_io(sys.executable, "-c", TRACED, *args)
    else:
        await client.start_io(sys.executable, "-m", "cudalens.server", *args)
    pid = client._server.pid
    await initialize(client, root)
    print(f"file: {text.count(chr(10)) + 1} lines, {text.count('__global__')} kernels; server log {root}/server.log"
          f"{' (under tracemalloc: times are not comparable)' if traced else ''}", flush=True)
    print(f"RSS before opening it: {rss_mib(pid):.1f} MiB", flush=True)

    path = root / "big.cu"
    path.write_text(text)
    uri = path.as_uri()
    sent = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "cuda", 1, text)))
    print(f"didOpen -> first diagnostics: {(await client.wait_for(uri, 1) - sent) * 1000:.0f} ms; "
          f"RSS {rss_mib(pid):.1f} MiB", flush=True)
    if traced:
        os.kill(pid, signal.SIGUSR2)

    line_no = next(i for i, line in enumerate(text.splitlines()) if EDIT_ANCHOR in line)
    current = text.splitlines()[line_no]
    latencies: list[float] = []
    taken: list[tuple[int, tracemalloc.Snapshot]] = []
    t0, cpu0 = time.perf_counter(), cpu_seconds(pid)
    for k in range(1, edits + 1):
        new = current.replace(current[current.index("out[i]"):], f"out[i] = in[i] + {k}.0f;")
        sent = time.perf_counter()
        replace_line(client, uri, k + 1, line_no, current, new)
        latencies.append(await client.wait_for(uri, k + 1) - sent)
        current = new
        if k in checkpoints:
            quarter = latencies[-max(len(latencies) // 4, 1):]
            print(f"  after {k:5d} edits: RSS {rss_mib(pid):6.1f} MiB; edit -> diagnostics median "
                  f"{statistics.median(latencies) * 1000:.0f} ms, p90 {percentile(latencies, 0.9) * 1000:.0f} ms "
                  f"(last quarter: {statistics.median(quarter) * 1000:.0f} / "
                  f"{percentile(quarter, 0.9) * 1000:.0f} ms); server CPU {(cpu_seconds(pid) - cpu0) / k * 1000:.0f} ms "
                  "an edit", flush=True)
        if traced and k in snapshots:
            taken.append((k, await snapshot(pid, root, len(taken) + 1)))
        await asyncio.sleep(0.02)  # a pause between keystrokes: each edit is analysed on its own
    print(f"  ({edits} edits in {time.perf_counter() - t0:.0f} s)", flush=True)
    if len(taken) >= 2:
        print_growth(taken[0][1], taken[-1][1], (taken[0][0], taken[-1][0]), top)

    await shut_down(client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--edits", type=int, default=2000)
    parser.add_argument("--checkpoints", default="200,1000,2000,4000,8000",
                        help="edit counts after which RSS and latencies are printed (the last edit is one too)")
    parser.add_argument("--tracemalloc", action="store_true", help="run the server under tracemalloc")
    parser.add_argument("--snapshots", default="200",
                        help="edit counts after which a snapshot is taken (the last edit is one too)")
    parser.add_argument("--collect", action="store_true", help="a full collection before each snapshot")
    parser.add_argument("--frames", type=int, default=6, help="frames tracemalloc keeps per allocation")
    parser.add_argument("--top", type=int, default=15, help="allocation sites printed")
    args = parser.parse_args()
    checkpoints = [int(c) for c in args.checkpoints.split(",") if int(c) < args.edits] + [args.edits]
    snapshots = [int(c) for c in args.snapshots.split(",") if int(c) < args.edits] + [args.edits]
    asyncio.run(run(args.lines, args.edits, checkpoints, args.tracemalloc, snapshots, args.top, args.frames,
                    args.collect))


if __name__ == "__main__":
    main()
