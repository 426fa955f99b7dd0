"""The warm ncu target's life cycle, with a real child standing in for ncu + profile_target (the same stdin
contract: one payload path, or end-of-file to leave without running)."""

from __future__ import annotations

import sys
from pathlib import Path

from cudalens.profiler.ncu import standby

CHILD = (
    "import sys, pathlib\n"
    "line = sys.stdin.readline().strip()\n"
    "if not line: sys.exit(0)\n"
    "pathlib.Path(sys.argv[1]).write_text(pathlib.Path(line).read_text())\n"
    "print('profiled', line)\n"
)


def command_for(report: Path) -> list[str]:
    return [sys.executable, "-c", CHILD, str(report)]


def test_a_standby_runs_one_payload_and_is_then_gone(tmp_path):
    key = standby.key_for(command_for(Path("REPORT")), None)
    standby.start(key, command_for, None)
    warm = standby.take(key)
    assert warm is not None and warm.alive()
    assert standby.take(key) is None  # one run per standby
    payload = tmp_path / "payload.json"
    payload.write_text('{"path": "k.cu"}')
    run = standby.run(warm, payload, timeout=60)
    assert run.returncode == 0 and "profiled" in run.output
    assert warm.report.read_text() == '{"path": "k.cu"}'
    warm.discard()
    assert not warm.folder.exists()


def test_a_standby_whose_parent_leaves_exits_without_running(tmp_path):
    env = {"CUDALENS_TEST": "1"}
    key = standby.key_for(command_for(Path("REPORT")), env)
    standby.start(key, command_for, env)
    warm = standby.take(key)
    assert warm is not None
    warm.proc.stdin.close()  # what the pipe does when this process dies
    assert warm.proc.wait(timeout=60) == 0
    assert not warm.report.exists()
    warm.discard()


def test_close_all_kills_the_waiting_standbys():
    key = standby.key_for(command_for(Path("OTHER")), None)
    standby.start(key, command_for, None)
    (waiting,) = standby._STANDBYS[key]
    proc = waiting.proc
    standby.close_all()
    assert proc.wait(timeout=30) is not None
    assert standby.take(key) is None


def test_a_save_keeps_a_spare_warming_for_the_next_one():
    key = standby.key_for(command_for(Path("SPARE")), None, owner="spare-test")
    standby.start(key, command_for, None, count=2, owner="spare-test")  # a save that will profile begins
    first, spare = standby._STANDBYS[key]
    assert standby.take(key) is first  # the oldest: the one most likely ready
    standby.start(key, command_for, None, owner="spare-test")  # after the profile: the spare is the one kept warm
    assert standby._STANDBYS[key] == [spare]
    first.discard()
    spare.proc.kill()
    spare.proc.wait(timeout=30)
    standby.start(key, command_for, None, owner="spare-test")  # a dead one is replaced
    (fresh,) = standby._STANDBYS[key]
    assert fresh is not spare and fresh.alive() and not spare.folder.exists()
    standby.drop_owner("spare-test")
    assert fresh.proc.wait(timeout=30) is not None and key not in standby._STANDBYS


def test_an_owner_ends_only_its_own_standbys():
    theirs = standby.key_for(command_for(Path("R")), None, owner="optimize-a")
    ours = standby.key_for(command_for(Path("R")), None, owner="optimize-b")
    assert theirs != ours  # same command and environment, kept apart
    standby.start(theirs, command_for, None, owner="optimize-a")
    standby.start(ours, command_for, None, owner="optimize-b")
    (gone,), (kept,) = standby._STANDBYS[theirs], standby._STANDBYS[ours]
    standby.drop_owner("optimize-a")
    assert gone.proc.wait(timeout=30) is not None and theirs not in standby._STANDBYS
    assert kept.alive()
    standby.drop_owner("optimize-b")
