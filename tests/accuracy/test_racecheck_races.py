"""The race corpus's racecheck runner (benchmarks/accuracy/racecheck_races.py), on the CPU: its input graph is the
ECL binary CSR the suites read, and its score sorts programs by what racecheck saw against our findings."""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path

ACCURACY = Path(__file__).resolve().parents[2] / "benchmarks" / "accuracy"
sys.path.insert(0, str(ACCURACY))
_spec = importlib.util.spec_from_file_location("racecheck_races", ACCURACY / "racecheck_races.py")
racecheck_races = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(racecheck_races)


def test_the_graph_is_undirected_sorted_csr_with_a_hub(tmp_path):
    racecheck_races.write_graph(tmp_path / "g.egr", nodes=10)
    data = (tmp_path / "g.egr").read_bytes()
    nodes, edges = struct.unpack("<2i", data[:8])
    nindex = struct.unpack(f"<{nodes + 1}i", data[8:8 + 4 * (nodes + 1)])
    nlist = struct.unpack(f"<{edges}i", data[8 + 4 * (nodes + 1):8 + 4 * (nodes + 1 + edges)])
    assert len(data) == 8 + 4 * (nodes + 1) + 8 * edges  # weights follow the list
    assert nindex[0] == 0 and nindex[-1] == edges and nindex[1] == nodes - 1  # vertex 0 joined to all
    pairs = {(v, nlist[i]) for v in range(nodes) for i in range(nindex[v], nindex[v + 1])}
    assert all((u, v) in pairs for v, u in pairs)
    assert all(list(nlist[nindex[v]:nindex[v + 1]]) == sorted(nlist[nindex[v]:nindex[v + 1]]) for v in range(nodes))


def test_the_score_sets_our_findings_against_racecheck(tmp_path, capsys):
    def record(truth, findings, errors):
        return json.dumps({"repo": "s/x", "path": f"p{errors}{len(findings)}.cu", "truth": truth,
                           "findings": findings, "racecheck": {"errors": errors, "warnings": 0, "places": []}})
    lines = [record("race-free", [[5, "CL303", "error"]], 3),    # a proven race racecheck confirms
             record("race-free", [[5, "CL303", "info"]], 0),     # info, racecheck clean
             record("racy", [], 2),                               # missed
             json.dumps({"repo": "s/x", "path": "q.cu", "truth": "racy", "findings": [], "error": "deadline"})]
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    racecheck_races.score(tmp_path / "r.jsonl")
    out = capsys.readouterr().out
    assert "| s/x | race-free | 2 | 1 | 1 | 0 | 0 | 1 | 0 | 0 | 0 |" in out
    assert "| s/x | racy | 1 | 1 | 0 | 0 | 0 | 0 | 1 | 0 | 1 |" in out
    assert "s/x:p20.cu label racy, ours none, racecheck 2 errors" in out
