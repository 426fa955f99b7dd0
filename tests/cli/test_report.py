"""`cudalens report`: one self-contained HTML page from a real optimize run folder or a kernel file; and the page
opened in real Chromium (playwright-core, as the VS Code e2e drives it) with its charts drawn."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.report_run import KERNEL, recorded_run

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "cudalens"]
PLAYWRIGHT = ROOT / "vscode-client" / "node_modules" / "playwright-core"
CHROMIUM = Path("/usr/bin/chromium")
BROWSER_CHECK = Path(__file__).with_name("report_in_chromium.mjs")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    os.environ["CUDALENS_REPORT_KEY"] = "sk-report-test-not-a-secret"
    return recorded_run(tmp_path_factory.mktemp("report"), "CUDALENS_REPORT_KEY")


def cudalens(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


def _self_contained(page: str) -> None:
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert not re.search(r'\b(src|href)="(?!#)', page)
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", page))  # only the SVGs' own clip paths


def test_report_of_a_run_has_roofline_history_verdicts_and_hot_lines(run_dir: Path) -> None:
    done = cudalens("report", str(run_dir))
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path == (run_dir / "report.html").resolve()
    page = path.read_text(encoding="utf-8")
    _self_contained(page)
    roofline = page[page.index('id="roofline-chart"'):page.index('id="history"')]
    assert roofline.count("<svg") == 1 and roofline.count("<path") > 10
    for label in (f"round 0 · {KERNEL}", f"round 2 · {KERNEL}", f"round 3 · {KERNEL}"):
        assert label in roofline  # each correct candidate is a point, named in the chart's own text
    assert "tensor FP16/BF16 989.5 TFLOP/s" in roofline and "DRAM 4.8 TB/s" in roofline
    history = page[page.index('id="history-chart"'):page.index('id="verdicts"')]
    assert history.count("<svg") == 1 and "speedup vs PyTorch" in history and "total $" in history
    summary = json.loads((run_dir / "summary.json").read_text())
    tokens = sum(r["tokens"] for r in summary["rounds"])
    assert f"{len(summary['rounds'])} rounds, {tokens} tokens" in page
    verdicts = page[page.index('id="verdicts"'):page.index('id="source"')]
    assert verdicts.count("<tr>") == 1 + len(summary["rounds"]) and "memory-bound" in verdicts
    source = page[page.index('id="source"'):]
    assert "round 3: source.py" in source and "return x.sum(dim=1)" in source
    assert 'title="idle thread slots: 2000"' in source  # the best round's counters on its line 25


def test_report_of_a_file_without_a_profile_is_predicted(tmp_path: Path) -> None:
    kernel = tmp_path / "transpose.py"
    shutil.copy(ROOT / "benchmarks" / "judge_suite" / "01_uncoalesced_transpose.py", kernel)
    done = cudalens("report", str(kernel), "--out", str(tmp_path / "page.html"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    _self_contained(page)
    assert "No measured point" in page and "--profile" in page
    assert "Predicted memory-bound" in page and "Coalesce global memory accesses" in page
    assert "features: 256 threads/block" in page and "out[y * n + x] = in[x * n + y];" in page


def _gpu_line(page: str) -> str:
    return re.search(r'<p class="muted" id="gpu">(.*?)</p>', page).group(1)


def test_the_page_says_whose_peaks_it_draws_and_why(tmp_path: Path) -> None:
    """Not a bare "NVIDIA H200" on a machine without one: the H200 is the default, named as such; --gpu draws
    the named GPU's, and an unknown name says it fell back."""
    kernel = tmp_path / "transpose.py"
    shutil.copy(ROOT / "benchmarks" / "judge_suite" / "01_uncoalesced_transpose.py", kernel)
    lines = {}
    for name, extra in (("default", ()), ("a100", ("--gpu", "A100")), ("unknown", ("--gpu", "Voodoo5"))):
        done = cudalens("report", str(kernel), "--out", str(tmp_path / f"{name}.html"), *extra)
        assert done.returncode == 0, done.stderr
        lines[name] = _gpu_line((tmp_path / f"{name}.html").read_text(encoding="utf-8"))
    assert lines["default"].startswith("Peaks of the NVIDIA H200 (sm_90, 132 SMs)")
    assert lines["default"].endswith("— the default, not this machine&#x27;s: --gpu NAME for another, --profile for "
                                     "this machine&#x27;s"), lines["default"]
    assert "A100" in lines["a100"].split("(")[0] and lines["a100"].endswith("— named by --gpu A100")
    assert lines["unknown"].startswith("Peaks of the NVIDIA H200")
    assert "--gpu Voodoo5 is not a GPU cudalens knows" in lines["unknown"]


def test_report_of_a_file_goes_to_its_projects_cudalens_folder_which_git_ignores(tmp_path: Path) -> None:
    """Not beside the file (a new file `git status` offers to commit): `.cudalens/reports/` of the project, at
    the file's path there, so two `transpose.py` of one project get two pages; `.cudalens/` holds the
    `.gitignore` that keeps it out of the repository."""
    project = tmp_path / "project"
    kernels = [project / "src" / folder / "transpose.py" for folder in ("a", "b")]
    for kernel in kernels:
        kernel.parent.mkdir(parents=True)
        shutil.copy(ROOT / "benchmarks" / "judge_suite" / "01_uncoalesced_transpose.py", kernel)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    pages = []
    for kernel in kernels:
        done = cudalens("report", str(kernel))  # from another folder: the project is the file's
        assert done.returncode == 0, done.stderr
        pages.append(Path(done.stdout.strip()))
    reports = project / ".cudalens" / "reports" / "src"
    assert pages == [reports / "a" / "transpose.py.report.html", reports / "b" / "transpose.py.report.html"]
    assert all("Predicted memory-bound" in page.read_text(encoding="utf-8") for page in pages)
    assert sorted(p.name for p in kernels[0].parent.iterdir()) == ["transpose.py"]  # nothing beside the file
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            capture_output=True, text=True, check=True, timeout=60).stdout
    assert sorted(status.splitlines()) == ["?? src/a/transpose.py", "?? src/b/transpose.py"]


def test_a_target_that_is_no_run_gets_one_line_and_status_2(tmp_path: Path) -> None:
    done = cudalens("report", str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"cudalens report: {tmp_path}: not an optimize run (no summary.json; runs live in " \
                                  ".cudalens/runs/)"


@pytest.mark.skipif(not (PLAYWRIGHT.is_dir() and CHROMIUM.is_file()),
                    reason="needs vscode-client's playwright-core (npm ci in vscode-client) and /usr/bin/chromium")
def test_the_page_renders_its_charts_in_chromium(run_dir: Path, tmp_path: Path) -> None:
    page = run_dir / "report.html"
    if not page.exists():
        assert cudalens("report", str(run_dir)).returncode == 0
    shot = ROOT / "docs" / "images" / "report.png" if os.environ.get("CUDALENS_UPDATE_SCREENSHOTS") \
        else tmp_path / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["node", str(BROWSER_CHECK), str(page), str(shot), str(CHROMIUM)], capture_output=True,
                          text=True, timeout=180, env={**os.environ, "NODE_PATH": str(PLAYWRIGHT.parent)})
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["requests"] == [page.resolve().as_uri()]  # nothing fetched but the page itself
    roof, hist = seen["charts"]["roofline-chart"], seen["charts"]["history-chart"]
    assert roof["width"] > 300 and roof["height"] > 150 and roof["paths"] > 10
    assert hist["width"] > 300 and hist["rects"] + hist["paths"] > 5
    assert {f"round 0 · {KERNEL}", f"round 3 · {KERNEL}"} <= set(roof["texts"])
    assert seen["heatCells"] > 0 and shot.stat().st_size > 20_000
