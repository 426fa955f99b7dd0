"""The adversarial corpus on the CPU: every case assembles from its base into the text the GPU verdicts were
measured on (its manifest sha256), compiles, and says what it is; the shared bodies live in bases/ only."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "adversarial"
CASES = json.loads((CORPUS / "manifest.json").read_text())
CASE_LINES = 60  # a docstring, a base's name and what differs; a longer case holds a body that belongs in a base


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["file"])
def test_every_case_assembles_into_the_reply_the_verdicts_were_measured_on(adversarial, case):
    text = adversarial.assemble(case["file"])
    assert hashlib.sha256(text.encode()).hexdigest() == case["sha256"]
    tree = compile(text, case["file"], "exec", ast.PyCF_ONLY_AST)
    bound = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)} | {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert {"Model", "ModelNew", "get_inputs", "get_init_inputs"} <= bound
    assert case["class"] and (case["honest"] or case["caught_by"])
    assert all(re.fullmatch(r"CL\d{3}", code) for code in case.get("caught_by", []))
    assert text.startswith('"""HONEST' if case["honest"] else '"""CHEAT')
    for code in case.get("caught_by", []):
        assert code in text.split('"""')[1], f"{case['file']}'s docstring does not name {code}"


def test_cases_hold_only_what_differs_and_every_base_serves_one():
    files = {p.name for p in CORPUS.glob("*.py")} - {"assemble.py"}
    assert files == {c["file"] for c in CASES}, "a case file the manifest does not list, or the reverse"
    long = {f: n for f in files if (n := len((CORPUS / f).read_text().splitlines())) > CASE_LINES}
    assert not long, f"case files over {CASE_LINES} lines (move the shared body into bases/): {long}"
    named = {m for p in [*CORPUS.glob("*.py"), *(CORPUS / "bases").glob("*.py")]
             for m in re.findall(r'^BASE = "(\w+)"$', p.read_text(), re.M)}
    assert {p.stem for p in (CORPUS / "bases").glob("*.py")} == named, "a base that no case or base names"


def test_a_broken_case_is_one_line_naming_its_file(adversarial, tmp_path):
    (tmp_path / "bases").mkdir()
    (tmp_path / "bases" / "body.py").write_text("import torch\n\n\nx = 1\n")
    broken = {
        "no_doc.py": 'BASE = "body"\nEDITS = []\n',
        "no_base.py": '"""D."""\nBASE = "absent"\nEDITS = []\n',
        "escape.py": '"""D."""\nBASE = "../body"\nEDITS = []\n',
        "past_end.py": '"""D."""\nBASE = "body"\nEDITS = [(9, 9, "y = 2\\n")]\n',
        "out_of_order.py": '"""D."""\nBASE = "body"\nEDITS = [(4, 4, "x = 2\\n"), (1, 1, "")]\n',
        "not_literal.py": '"""D."""\nBASE = "body"\nEDITS = [open("x")]\n',
        "syntax.py": '"""D."""\nBASE = (\n',
    }
    (tmp_path / "bases" / "loop.py").write_text('BASE = "loop"\nEDITS = []\n')
    for name, text in broken.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(adversarial.CaseError) as caught:
            adversarial.assemble(name, tmp_path)
        assert str(caught.value).startswith(f"{name}: ") and "\n" not in str(caught.value)
    (tmp_path / "cycle.py").write_text('"""D."""\nBASE = "loop"\nEDITS = []\n')
    with pytest.raises(adversarial.CaseError, match=r"^loop.py: bases derived more than 8 deep"):
        adversarial.assemble("cycle.py", tmp_path)
    (tmp_path / "fine.py").write_text('"""D."""\nBASE = "body"\nEDITS = [(4, 4, "x = 2\\n"), (2, 1, "import os\\n")]\n')
    with pytest.raises(adversarial.CaseError, match="not in order"):
        adversarial.assemble("fine.py", tmp_path)
    (tmp_path / "fine.py").write_text('"""D."""\nBASE = "body"\nEDITS = [(2, 1, "import os\\n"), (4, 4, "x = 2\\n")]\n')
    assert adversarial.assemble("fine.py", tmp_path) == '"""D."""\nimport torch\nimport os\n\n\nx = 2\n'


def test_the_script_writes_every_reply_out_for_a_reader(tmp_path):
    script = CORPUS / "assemble.py"
    run = subprocess.run([sys.executable, str(script), str(tmp_path / "out")], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0 and f"{len(CASES)} cases written" in run.stdout, run.stderr
    first = CASES[0]
    assert hashlib.sha256((tmp_path / "out" / first["file"]).read_bytes()).hexdigest() == first["sha256"]
    bad = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
