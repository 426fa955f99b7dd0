"""Hardware truth for the race corpus (issue 35): `compute-sanitizer --tool racecheck` on the programs whose
static findings and suite labels are worth checking, most telling first (library_corpus.py's plan: a finding at
warning/error on a program its suite calls race-free, info on one, racy programs without a proven finding, racy
ones with one, then race-free programs with shared memory and no finding).

    python benchmarks/accuracy/library_corpus.py score --races --plan benchmarks/accuracy/out/race_plan.json  # CPU
    python3 benchmarks/accuracy/racecheck_races.py --plan benchmarks/accuracy/out/race_plan.json --out "$OUT"  # GPU
    python benchmarks/accuracy/racecheck_races.py --score "$OUT/racecheck.jsonl"                          # CPU
    python benchmarks/accuracy/racecheck_races.py --score "$OUT/racecheck.jsonl" --recheck   # this tree's findings

Each program is built as its suite builds it (`nvcc -O3 -std=c++17`, here with `-lineinfo -arch=sm_90` and the
two `-D`s that let its host code build with CUDA 13: see `_CUDA13`), run
once without a tool to find which of the suites' command lines it takes (`graph 1`, `graph`, `graph 256 1024`:
it prints its USAGE otherwise), on a generated graph (1000 vertices, a hub joined to all, a ring; weights 1–10;
the ECL binary CSR the suites read), then under racecheck (`--racecheck-report all`). One line per program goes
to `racecheck.jsonl` as soon as it is done: the label, our findings, racecheck's error and warning hazards and
the lines they name. Work stops starting at `--deadline` seconds. Standard library only; needs nvcc and
compute-sanitizer.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure

ROOT = Path(__file__).resolve().parents[2]
# CUDA 13 dropped two fields of cudaDeviceProp that the Indigo suites' host code prints: read as other int fields
# (the printed MHz are wrong; nothing else reads them)
_CUDA13 = ["-DclockRate=major", "-DmemoryClockRate=minor"]
_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")


def write_graph(path: Path, nodes: int = 1000) -> None:
    """An undirected graph in the ECL binary CSR format (nodes, edges, nindex, nlist, eweight; int32): vertex 0
    joined to every other (a neighbour list long enough for every thread of a block) and a ring."""
    adjacency: list[set[int]] = [set() for _ in range(nodes)]
    for v in range(1, nodes):
        adjacency[0].add(v)
        adjacency[v].add(0)
        u = v + 1 if v + 1 < nodes else 1
        adjacency[v].add(u)
        adjacency[u].add(v)
    nindex, nlist = [0], []
    for v in range(nodes):
        nlist += sorted(adjacency[v])
        nindex.append(len(nlist))
    weights = [1 + (i * 7) % 10 for i in range(len(nlist))]
    path.write_bytes(struct.pack(f"<2i{len(nindex)}i{len(nlist)}i{len(weights)}i", nodes, len(nlist), *nindex,
                                 *nlist, *weights))


def build(source: Path, work: Path, arch: str) -> tuple[Path | None, str]:
    binary = work / (source.parent.name + "+" + source.stem)
    code, out = measure.run(["nvcc", "-O3", "-std=c++17", "-lineinfo", f"-arch={arch}", *_CUDA13,
                             "-I", str(source.parent), str(source), "-o", str(binary)], timeout=120)
    return (binary if code == 0 and binary.exists() else None), out[-2000:]


def command_line(binary: Path, graph: Path) -> tuple[list[str] | None, str]:
    """The first of the suites' command lines the program accepts (no USAGE message, exit 0)."""
    out = ""
    # sssp's `source verify` (source 0, the hub; no verification)
    for argv in ([str(graph), "1"], [str(graph)], [str(graph), "256", "1024"], [str(graph), "0", "0"], []):
        code, out = measure.run([str(binary), *argv], timeout=60, cwd=binary.parent)
        if code == 0 and "USAGE" not in out.upper():
            return argv, out[-500:]
    return None, out[-500:]


def racecheck(binary: Path, argv: list[str], names: set[str], timeout: float) -> dict:
    """racecheck's error and warning hazards and the source lines (of the files in `names`) they name."""
    code, out = measure.run(["compute-sanitizer", "--tool", "racecheck", "--racecheck-report", "all",
                             "--print-limit", "200", str(binary), *argv], timeout=timeout, cwd=binary.parent)
    summary = _SUMMARY.search(out)
    hits = measure.parse_sanitizer(out, names)
    return {"exit_code": code, "errors": int(summary.group(2)) if summary else None,
            "warnings": int(summary.group(3)) if summary else None,
            "places": sorted({f"{f}:{n}" for h in hits for f, n in h["places"]})[:20], "tail": out[-1500:]}


def measure_all(plan: dict, out: Path, jobs: int, deadline: float, arch: str, nodes: int = 1000,
                select: str | None = None) -> int:
    start = time.monotonic()
    root = ROOT / plan["root"]
    work = out / "bin"
    work.mkdir(parents=True, exist_ok=True)
    graph = out / "graph.egr"
    write_graph(graph, nodes)
    if select is not None:
        plan = {**plan, "programs": [p for p in plan["programs"] if re.search(select, p["path"])]}
    results = out / "racecheck.jsonl"

    def one(program: dict) -> None:
        if time.monotonic() - start > deadline:
            return
        record = dict(program)
        source = root / program["path"]
        binary, text = build(source, work, arch)
        if binary is None:
            record["error"] = "build failed: " + text[-300:]
        else:
            argv, text = command_line(binary, graph)
            left = deadline - (time.monotonic() - start)
            if argv is None:
                record["error"] = "no command line accepted: " + text[-300:]
            elif left < 10:
                record["error"] = "deadline"
            else:
                record["argv"] = [("graph" if a == str(graph) else a) for a in argv]
                names = {p.name for p in source.parent.iterdir() if p.suffix in (".cu", ".cuh", ".h")}
                record["racecheck"] = racecheck(binary, argv, names, timeout=min(180.0, left))
            binary.unlink(missing_ok=True)
        with results.open("a") as f:
            f.write(json.dumps(record) + "\n")

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, plan["programs"]))
    done = sum(1 for _ in results.open()) if results.exists() else 0
    print(f"{done} of {len(plan['programs'])} programs → {results} in {time.monotonic() - start:.0f} s")
    return 0


def current_findings() -> dict[str, list[list]]:
    """The race corpus's CL302/CL303 findings as this tree makes them, per program (the plan's `path`)."""
    import library_corpus as corpus
    entries = [e for e in json.loads(corpus.MANIFEST.read_text())["repos"] if "race_truth" in e]
    out: dict[str, list[list]] = defaultdict(list)
    for f in corpus.findings([corpus.folder(e["repo"]) for e in entries], ",".join(corpus.RACE_CODES)):
        path = str((ROOT / f["path"]).resolve().relative_to(corpus.OUT.resolve()))  # f["path"]: from the root
        out[path].append([f["line"], f["code"], f["severity"]])
    return out


def score(results: Path, recheck: bool = False) -> int:
    """Per suite and label: programs racecheck ran, how many it found racy, and how our findings compare (those
    the plan recorded, or with `recheck` those this tree makes now: a change scored against the same run)."""
    rows: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    disagreements = []
    now = current_findings() if recheck else None
    for line in results.read_text().splitlines():
        r = json.loads(line)
        if now is not None:
            r["findings"] = now.get(r["path"], [])
        row = rows[r["repo"], r["truth"]]
        rc = r.get("racecheck")
        if rc is None or rc["errors"] is None:
            row["not run"] += 1
            continue
        racy = rc["errors"] + rc["warnings"] > 0
        proven = any(sev in ("warning", "error") for _, _, sev in r["findings"])
        ours = "W/E" if proven else "info" if r["findings"] else "none"
        row["run"] += 1
        row["racecheck racy"] += racy
        row[f"{ours}, racecheck {'racy' if racy else 'clean'}"] += 1
        if (proven and not racy) or (racy and ours == "none"):
            disagreements.append(f"{r['repo']}:{r['path']} label {r['truth']}, ours {ours}, racecheck "
                                 f"{rc['errors']} errors {rc['warnings']} warnings {' '.join(rc['places'][:3])}")
    kinds = ["W/E, racecheck racy", "W/E, racecheck clean", "info, racecheck racy", "info, racecheck clean",
             "none, racecheck racy", "none, racecheck clean"]
    print("| suite | label | run | racecheck racy | " + " | ".join(kinds) + " | not run |")
    print("|---|---|---:|---:|" + "---:|" * (len(kinds) + 1))
    for (repo, truth), row in sorted(rows.items()):
        print(f"| {repo} | {truth} | {row['run']} | {row['racecheck racy']} | "
              + " | ".join(str(row[k]) for k in kinds) + f" | {row['not run']} |")
    print(f"\nproven but racecheck clean, or racecheck racy and no finding ({len(disagreements)}):")
    print("\n".join(disagreements))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plan", type=Path, help="library_corpus.py score --races --plan's file")
    parser.add_argument("--out", type=Path, help="where racecheck.jsonl goes")
    parser.add_argument("--jobs", type=int, default=12)
    parser.add_argument("--deadline", type=float, default=330.0, help="seconds after which no work starts")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--nodes", type=int, default=1000, help="the graph's vertices: more than the grid's warps "
                        "(132 SMs × 64) makes a persistent kernel's warps run a second iteration")
    parser.add_argument("--select", help="only the plan's programs whose path this regular expression matches")
    parser.add_argument("--score", type=Path, help="a racecheck.jsonl to score (CPU)")
    parser.add_argument("--recheck", action="store_true", help="with --score: this tree's findings, not the plan's")
    args = parser.parse_args(argv)
    if args.score is not None:
        return score(args.score, args.recheck)
    if args.plan is None or args.out is None:
        parser.error("give --plan and --out (GPU), or --score (CPU)")
    return measure_all(json.loads(args.plan.read_text()), args.out, args.jobs, args.deadline, args.arch, args.nodes,
                       args.select)


if __name__ == "__main__":
    raise SystemExit(main())
