"""`cudalens optimize` through its argparse entry point, against the local OpenAI-compatible server."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cudalens.cli import optimize_cmd
from tests.agents.fake_openai import FakeOpenAI, reply
from tests.agents.kernelbench_cpu import FAST, START, fenced

KEY = "sk-cli-SECRET-5555"


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="cudalens optimize")
    optimize_cmd.add_arguments(parser)
    return optimize_cmd.run(parser.parse_args(argv))


@pytest.fixture
def problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLI_TEST_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "row_sum.py"
    path.write_text(START)
    return path


def _common(fake: FakeOpenAI, evaluator: str = "isolated") -> list[str]:
    # isolated by default: single-threaded CPU timing, so the fast candidate's speedup is not noise
    return [
        "--base-url",
        fake.base_url,
        "--api-key-env",
        "CLI_TEST_KEY",
        "--allow-torch-ops",
        "--rounds",
        "1",
        "--evaluator",
        evaluator,
        "--quiet",
    ]


def test_best_candidate_goes_to_a_new_file_never_the_input(
    problem: Path, capsys: pytest.CaptureFixture
) -> None:
    with FakeOpenAI([reply(fenced(FAST))]) as fake:
        code = _run([str(problem), *_common(fake)])
    assert code == 0
    assert problem.read_text() == START
    assert (problem.parent / "row_sum.optimized.py").read_text() == FAST
    err = capsys.readouterr().err
    assert "best" in err and "round 1" in err and KEY not in err
    runs = list((problem.parent / ".cudalens" / "runs").iterdir())
    assert len(runs) == 1 and (runs[0] / "summary.md").is_file()
    # the run log is no new file to commit: .cudalens/ holds the .gitignore that says so
    subprocess.run(["git", "init", "-q"], cwd=problem.parent, check=True, timeout=60)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=problem.parent,
                            capture_output=True, text=True, check=True, timeout=60).stdout
    assert sorted(status.splitlines()) == ["?? row_sum.optimized.py", "?? row_sum.py"]


def test_the_coders_model_has_the_name_cudalens_model_gives_it(problem: Path) -> None:
    """`--coder-model`, as `cudalens model` names it (and as `coder.model` is named in the editor)."""
    with FakeOpenAI([reply(fenced(FAST))]) as fake:
        assert _run([str(problem), *_common(fake), "--coder-model", "stub-7"]) == 0
    assert fake.requests[0].body["model"] == "stub-7"


def test_the_first_spelling_of_the_coders_model_still_works_unshown() -> None:
    parser = argparse.ArgumentParser(prog="cudalens optimize")
    optimize_cmd.add_arguments(parser)
    assert parser.parse_args(["m.py", "--model", "stub-8"]).coder_model == "stub-8"
    assert parser.parse_args(["m.py"]).coder_model == "o3"
    shown = parser.format_help()
    assert "--coder-model NAME" in shown and not re.search(r"(?<![\w-])--model\b", shown)


def test_diff_to_stdout(problem: Path, capsys: pytest.CaptureFixture) -> None:
    with FakeOpenAI([reply(fenced(FAST))]) as fake:
        code = _run([str(problem), *_common(fake), "--diff"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("--- a/row_sum.py\n+++ b/row_sum.py\n")
    assert "+        return x.sum(dim=1)" in out
    assert sorted(os.listdir(problem.parent)) == [".cudalens", "row_sum.py"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.py"], "cannot read"),
        (["notes.txt"], "not a KernelBench-style"),
    ],
)
def test_bad_input_is_a_one_line_error(
    argv: list[str], message: str, tmp_path: Path, monkeypatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    assert _run(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_missing_key_is_a_usage_error(problem: Path, monkeypatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert _run([str(problem)]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_missing_worker_interpreter_is_a_usage_error(problem: Path, capsys: pytest.CaptureFixture) -> None:
    assert _run([str(problem), "--worker-python", "/no/such/python3", "--api-key-env", "CLI_TEST_KEY"]) == 2
    assert "/no/such/python3 was not found" in capsys.readouterr().err


def test_default_profiler_worker_and_no_better_candidate(
    problem: Path, capsys: pytest.CaptureFixture
) -> None:
    from tests.agents.kernelbench_cpu import WRONG

    with FakeOpenAI([reply(fenced(WRONG))]) as fake:
        argv = [str(problem), *_common(fake, "profiler"), "--no-profile"]
        assert _run(argv) == 1
    err = capsys.readouterr().err
    assert "(round 0)" in err and "stopped: rounds" in err  # round 0 was correct; round 1 was wrong
    assert problem.read_text() == START and not (problem.parent / "row_sum.optimized.py").exists()


def test_a_candidate_that_stops_computing_after_its_trials_is_never_best(
    problem: Path, capsys: pytest.CaptureFixture
) -> None:
    """Issue 32: given this reply, `cudalens optimize` kept it and reported "best 2025.63× faster". Its timed
    calls now get fresh inputs and some are checked: the round fails with CL901, and nothing is written."""
    from tests.agents.kernelbench_cpu import SKIPS_AFTER_TRIALS

    with FakeOpenAI([reply(fenced(SKIPS_AFTER_TRIALS))]) as fake:
        assert _run([str(problem), *_common(fake)]) == 1
    err = capsys.readouterr().err
    assert "no faster correct candidate" in err or "(round 0)" in err, err
    assert not (problem.parent / "row_sum.optimized.py").exists()
    [run] = list((problem.parent / ".cudalens" / "runs").iterdir())
    round_1 = json.loads((run / "round-01" / "round.json").read_text())
    assert round_1["speedup"] is None
    assert [c["code"] for c in round_1["cheats"]] == ["CL901"]
    assert "changed behaviour between the correctness trials and the timing" in round_1["cheats"][0]["message"]


def test_beam_search_prints_its_tree(problem: Path, capsys: pytest.CaptureFixture) -> None:
    from tests.agents.kernelbench_cpu import WRONG

    with FakeOpenAI([reply(fenced(WRONG)), reply(fenced(FAST))]) as fake:
        argv = [str(problem), *_common(fake, "profiler"), "--no-profile", "--rounds", "2", "--search", "beam",
                "--width", "2"]
        argv.remove("--quiet")
        assert _run(argv) == 0
    err = capsys.readouterr().err
    tree = err.split("search tree (beam):\n", 1)[1].splitlines()
    assert tree[0].startswith("#0 initial: correct")
    assert tree[1].startswith("├─ #1 optimize [") and tree[2].startswith("└─ #2 optimize [")
    children = tree[1:3]
    assert any("failed" in c for c in children) and any("★" in c for c in children)


def test_chain_takes_width_one_only(problem: Path, capsys: pytest.CaptureFixture) -> None:
    assert _run([str(problem), "--api-key-env", "CLI_TEST_KEY", "--width", "3"]) == 2
    assert "--width" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_without_a_gpu_optimize_says_so_and_compiles_and_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A CUDA KernelBench file on a machine without a GPU: the editor's words, at once, before any build or Coder
    round (issue 32: it answered CL901 "CUDA_HOME is not set" after compiling)."""
    monkeypatch.setenv("CLI_TEST_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "relu_model.py"
    path.write_text((Path(__file__).parents[1] / "vscode" / "fixtures" / "relu_model.py").read_text())
    with FakeOpenAI([reply("never asked")]) as fake:
        code = _run([str(path), "--base-url", fake.base_url, "--api-key-env", "CLI_TEST_KEY", "--rounds", "3"])
    assert code == 2 and fake.requests == []
    err = capsys.readouterr().err.strip()
    assert err.startswith("cudalens optimize: optimizing needs an NVIDIA GPU to test and time the candidates, and "
                          "this machine has none: "), err
    assert len(err.splitlines()) == 1 and "CL901" not in err and "CUDA_HOME" not in err
    assert not (tmp_path / ".cudalens").exists()  # no run was started


def test_the_search_can_be_asked_to_beat_torch_compile(problem: Path, capsys: pytest.CaptureFixture) -> None:
    # issue 36: `--baseline compile`: every candidate's timing includes torch.compile(reference) and its speedup
    # is against it
    with FakeOpenAI([reply(fenced(FAST))]) as fake:
        code = _run([str(problem), *_common(fake), "--baseline", "compile"])
    assert code == 0
    assert "(round 1), " in (err := capsys.readouterr().err)
    assert "stopped: rounds; speedups against torch.compile of the reference\n" in err
    (run,) = (problem.parent / ".cudalens" / "runs").iterdir()
    evaluations = [json.loads(p.read_text()) for p in sorted(run.rglob("evaluation.json"))]
    timings = [e["timing"] for e in evaluations if e.get("timing")]
    assert timings and all(t["baseline"] == "compile" and t["compiled_reference"] for t in timings), timings
