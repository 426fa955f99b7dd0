"""The library corpus's manifest, labels and archive extraction (benchmarks/accuracy/library_corpus.py)."""

from __future__ import annotations

import importlib.util
import json
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
        assert ("paths" in entry) != ("archive" in entry), entry["repo"]
    sets = {entry["set"] for entry in repos}
    assert any(s.startswith("LLM-written") for s in sets) and any(s.startswith("hand-written") for s in sets)
    listed = {entry["repo"] for entry in repos}
    for key, (right, why) in json.loads(library_corpus.LABELS.read_text())["labels"].items():
        assert key.split(":", 1)[0] in listed, key
        assert isinstance(right, bool) and why.startswith("hand-read"), key
