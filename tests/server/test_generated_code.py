"""The server's start-up code cache (server/generated_code.py): a second start compiles nothing the first did,
what it builds behaves as the compiled classes do, and an unusable cache is a plain start, not a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cudalens.server import generated_code

ROOT = Path(__file__).resolve().parents[2]

# What a start runs, in a fresh interpreter (the cache is installed in modules, so one process per start).
START = textwrap.dedent("""
    import json
    from cudalens.server import generated_code
    import os
    cache = generated_code.start(() if os.environ.get("PLAIN") else generated_code.GENERATORS)
    from lsprotocol import types
    from cudalens.analysis.findings import Finding
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Later:
        x: "int"
        y: list = dataclasses.field(default_factory=list)

    p = types.Position(line=1, character=2)
    report = {
        "compiled": cache.compiled, "used": len(cache.used), "path": str(cache.path),
        "eq": p == types.Position(line=1, character=2), "repr": repr(p),
        "later": repr(Later(1)), "annotations": {k: str(v) for k, v in Later.__init__.__annotations__.items()},
        "finding_fields": [f.name for f in dataclasses.fields(Finding)][:3],
    }
    cache.save()
    print(json.dumps(report))
""")


def start(cache_home: Path, plain: bool = False) -> dict:
    env = {**os.environ, "CUDALENS_CACHE_DIR": str(cache_home), "PYTHONPATH": str(ROOT), "PLAIN": "1" if plain else ""}
    done = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_second_start_reads_what_the_first_compiled(tmp_path: Path) -> None:
    plain, first, second = start(tmp_path / "plain", plain=True), start(tmp_path / "cache"), start(tmp_path / "cache")
    assert plain["compiled"] == 0
    assert first["compiled"] > 500  # lsprotocol's classes and our dataclasses
    # attrs' frozen classes carry this process's hash() of a string in their text: a handful are new each time
    assert second["compiled"] <= 5 < second["used"]
    assert first["path"] == second["path"] == str(tmp_path / "cache" / "code" / f"server-{sys.implementation.cache_tag}.marshal")
    for key in ("eq", "repr", "later", "annotations", "finding_fields"):
        assert plain[key] == first[key] == second[key]
    assert second["eq"] and second["later"] == "Later(x=1, y=[])"
    # dataclasses' text is compiled with its own __future__ flags, not ours: annotations stay evaluated names
    assert second["annotations"] == {"x": "int", "y": "<class 'list'>", "return": "None"}
    assert os.stat(tmp_path / "cache" / "code").st_mode & 0o777 == 0o700


def test_a_folder_others_may_write_is_not_read(tmp_path: Path) -> None:
    shared = tmp_path / "cache" / "code"
    shared.mkdir(parents=True)
    shared.chmod(0o777)
    report = start(tmp_path / "cache")
    assert report["path"] == "None" and report["eq"]
    assert list(shared.iterdir()) == []


def test_a_damaged_file_is_a_plain_start(tmp_path: Path) -> None:
    start(tmp_path / "cache")
    stored = tmp_path / "cache" / "code" / f"server-{sys.implementation.cache_tag}.marshal"
    stored.write_bytes(stored.read_bytes()[:1000])
    report = start(tmp_path / "cache")
    assert report["compiled"] > 500 and report["eq"]
    assert start(tmp_path / "cache")["compiled"] <= 5  # and it was written whole again


@pytest.mark.parametrize("source", ["x = 1", b"x = 1"])
def test_text_and_bytes_compile_as_compile_does(tmp_path: Path, source) -> None:
    cache = generated_code.CodeCache(None)
    code = cache.code(source, "<t>", "exec", 0)
    assert code.co_filename == "<t>" and code.co_code == compile(source, "<t>", "exec").co_code


def test_a_file_that_cannot_be_written_is_a_log_line_not_a_traceback(tmp_path: Path) -> None:
    cache = generated_code.CodeCache(tmp_path / "gone" / "server.marshal")  # its folder is not there
    cache.code("x = 1", "<t>", "exec", 0)
    cache.save()
    assert cache.compiled == 1 and not (tmp_path / "gone").exists()
