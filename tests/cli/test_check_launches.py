"""`cudalens check DIR` knows every launch site of the files it checks: a header's kernel is analysed with the
launch a `.cu` file makes, its finding lands in the header and carries the launch as related information in
every output format; checked alone, the header's finding is only as proven as what it rests on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HEADER = (Path(__file__).parent / "fixtures" / "half_warp.cuh").read_text()
MAIN = '#include "kernels/k.cuh"\nvoid run(float* out) {\n    half_warp<<<1, 32>>>(out);\n}\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.cuh").write_text(HEADER)
    (tmp_path / "main.cu").write_text(MAIN)
    return tmp_path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_header_finding_is_proven_by_the_launch_in_the_including_file(project, cli, jobs) -> None:
    result = cli("check", ".", "--format", "json", "--jobs", jobs, "--exit-zero", cwd=project)
    [finding] = [f for f in json.loads(result.out)["findings"] if f["code"] == "CL201"]
    assert (finding["path"], finding["line"], finding["severity"]) == ("kernels/k.cuh", 4, "warning")
    assert finding["evidence"]["block"] == "32×1×1" and "assumed" not in finding["evidence"]
    assert finding["related"] == [{"path": "main.cu", "line": 3, "column": 5,
                                   "message": "`half_warp` is launched here with block 32×1×1"}]


def test_sarif_carries_the_launch_as_a_related_location(project, cli) -> None:
    result = cli("check", ".", "--format", "sarif", "--exit-zero", cwd=project)
    [run] = json.loads(result.out)["runs"]
    [res] = [r for r in run["results"] if r["ruleId"] == "CL201"]
    [related] = res["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"].endswith("main.cu")
    assert related["message"]["text"] == "`half_warp` is launched here with block 32×1×1"


def test_the_header_alone_says_what_it_assumed(project, cli) -> None:
    result = cli("check", "kernels/k.cuh", "--format", "json", "--exit-zero", cwd=project)
    [finding] = [f for f in json.loads(result.out)["findings"] if f["code"] == "CL201"]
    assert "no launch of `half_warp` found" in finding["message"] and finding["related"] == []
