"""The library corpus's manifest, labels and archive extraction (benchmarks/accuracy/library_corpus.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ACCURACY = Path(__file__).resolve().parents[2] / "benchmarks" / "accuracy"
sys.path.insert(0, str(ACCURACY))
_spec = importlib.util.spec_from_file_location("library_corpus", ACCURACY / "library_corpus.py")
library_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(library_corpus)


def test_an_archive_yields_one_python_file_per_solution_with_a_kernel():
    archive = json.dumps({
        "1": [{"task_id": 7, "custom_code": "src = '__global__ void k() {}'", "score": 1.0},
              {"task_id": 8, "custom_code": "return torch.relu(x)"},
              {"task_id": 9, "custom_code": None}],
        "3": [{"task_id": 2, "custom_code": "__global__ void g() {}"}],
    })
    files = library_corpus.archive_files("optimized_cuda_code/codes/h100.json", archive)
    assert files == {"optimized_cuda_code/codes/h100/1_7.py": "src = '__global__ void k() {}'",
                     "optimized_cuda_code/codes/h100/3_2.py": "__global__ void g() {}"}


def test_every_entry_is_pinned_in_a_set_and_every_label_names_a_listed_repository():
    repos = json.loads(library_corpus.MANIFEST.read_text())["repos"]
    for entry in repos:
        assert len(entry["commit"]) == 40, entry["repo"]
        assert entry["set"], entry["repo"]
        assert sum(k in entry for k in ("paths", "archive", "tree")) == 1, entry["repo"]
    sets = {entry["set"] for entry in repos}
    assert any(s.startswith("LLM-written") for s in sets) and any(s.startswith("hand-written") for s in sets)
    listed = {entry["repo"] for entry in repos}
    for key, (right, why) in json.loads(library_corpus.LABELS.read_text())["labels"].items():
        assert key.split(":", 1)[0] in listed, key
        assert isinstance(right, bool) and why.startswith("hand-read"), key


def _mirror(root: Path, repo: str, files: dict[str, str]) -> str:
    """A local mirror (`owner+name/repo`, as fetch lays them out) holding `files` in one commit; its sha."""
    work = root / "work"
    work.mkdir(parents=True)
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run([*git[:5], "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    bare = root / repo.replace("/", "+") / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_an_entrys_config_is_the_pyproject_table_check_reads(tmp_path):
    from cudalens.workspace.config import load_config

    (tmp_path / "pyproject.toml").write_text(library_corpus.project_file({"include-dirs": ["cpp/include"]}))
    result = load_config(tmp_path)
    assert not result.errors and result.config.include_dirs == (str(tmp_path / "cpp/include"),)


def test_a_label_for_one_array_of_a_line_wins_over_the_lines():
    labels = {"o/r:f.cuh:69:CL104": [True, "gather"], "o/r:f.cuh:69:CL104:ja": [False, "warp-uniform base"]}
    of = library_corpus.label_of
    assert of(labels, "o/r:f.cuh:69:CL104", {"message": "Data-dependent load from `ja`: …"})[0] is False
    assert of(labels, "o/r:f.cuh:69:CL104", {"message": "Data-dependent load from `col_weights`: …"})[0] is True


def test_a_tree_entry_runs_the_suites_generator_and_keeps_its_headers_beside_the_codes(tmp_path):
    generator = ("import sys, pathlib\n"
                 "opts = pathlib.Path('options.txt').read_text().split()\n"
                 "for o in opts:\n"
                 "    pathlib.Path(sys.argv[1], f'k_{o}.cu').write_text('#include \"lib.h\"\\n__global__ void k() {}\\n')\n")
    commit = _mirror(tmp_path / "mirror", "someone/suite", {
        "gen/make.py": generator, "gen/options.txt": "plain\n", "gen/out/.keep": "", "include/lib.h": "// lib\n"})
    entry = {"repo": "someone/suite", "commit": commit, "tree": {
        "generate": {"cwd": "gen", "configure": {"gen/options.txt": [["plain", "plain syncBug atomicBug"]]},
                     "commands": [["{python}", "make.py", "out"]]},
        "keep": ["gen/out/*.cu"], "select": "^(?!.*atomicBug)", "beside": ["include/*.h"]}}
    files = library_corpus.entry_files(entry, tmp_path / "mirror")
    assert files == {"gen/out/k_plain.cu": '#include "lib.h"\n__global__ void k() {}\n',
                     "gen/out/k_syncBug.cu": '#include "lib.h"\n__global__ void k() {}\n',
                     "gen/out/lib.h": "// lib\n"}


def test_a_suites_file_name_is_its_race_label_and_only_shared_memory_races_are_in_scope():
    entry = {"race_truth": {"syncBug": "racy", "atomicBug": "global", "race": "global"}}
    shared = "__shared__ int s[32]; __global__ void k() {}"
    assert library_corpus.race_truth(entry, "pull_block_cond_syncBug.cu", shared) == "racy"
    assert library_corpus.race_truth(entry, "pull_block_syncBug.cu", "__global__ void k() {}") == \
        "racy, no shared memory"
    assert library_corpus.race_truth(entry, "push_atomicBug.cu", shared) == "global"
    assert library_corpus.race_truth(entry, "race_interwarp_none-atom_waw.cu", "") == "global"
    assert library_corpus.race_truth(entry, "norace_interwarp_blkatom.cu", shared) == "race-free"
    assert library_corpus.race_truth(entry, "pull_block_NoSyncBug.cu", shared) == "race-free"


def test_every_race_suite_names_its_bug_kinds_and_a_racy_one():
    suites = [e for e in json.loads(library_corpus.MANIFEST.read_text())["repos"] if "race_truth" in e]
    assert {e["repo"] for e in suites} >= {"burtscher/IndigoSuite", "burtscher/Indigo3Suite", "csl-iisc/ScoR"}
    assert sum("racy" in e["race_truth"].values() for e in suites) >= 2
    for entry in suites:
        assert entry["set"] == "race corpus" and "tree" in entry, entry["repo"]
        assert set(entry["race_truth"].values()) <= {"racy", "global"}, entry["repo"]


def test_the_racecheck_plan_puts_canaries_then_disputed_programs_first():
    def program(name, truth, *severities):
        return {"repo": "s/x", "path": name, "truth": truth, "findings": [[1, "CL303", s] for s in severities]}
    programs = [program("quiet.cu", "race-free"), program("found.cu", "racy", "error"),
                program("missed.cu", "racy"), program("info.cu", "race-free", "info"),
                program("alarm.cu", "race-free", "error"), program("global.cu", "global", "info")]
    assert [p["path"] for p in library_corpus.plan(programs, rest=0)] == \
        ["found.cu", "alarm.cu", "info.cu", "missed.cu"]
