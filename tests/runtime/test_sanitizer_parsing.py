"""compute-sanitizer output → issues → CL905 findings, on recorded sample output."""

from __future__ import annotations

from cudalens.profiler import sanitizer


def test_memcheck(data_dir):
    issues, count = sanitizer.parse("memcheck", (data_dir / "memcheck_illegal.txt").read_text())
    assert count == 3
    assert [i.kind for i in issues] == ["invalid-global-write", "invalid-global-write", "api-error"]
    first = issues[0]
    assert first.file.endswith("illegal_access.cu") and first.line == 6
    assert first.kernel == "scale_oob(const float *, float *, int)"
    assert first.thread == (0, 0, 0) and first.block == (0, 0, 0)
    assert issues[2].line is None


def test_racecheck_new_and_old_formats(data_dir):
    for name in ("racecheck_race.txt", "racecheck_race_old.txt"):
        issues, count = sanitizer.parse("racecheck", (data_dir / name).read_text())
        assert len(issues) == 1 and count == 1, name
        race = issues[0]
        assert race.kind == "race"
        assert (race.line, race.other_line) == (7, 8)
        assert race.count == 16320
        assert race.kernel.startswith("reverse_block")


def test_clean_racecheck_counts_zero_errors():
    # racecheck has no ERROR SUMMARY line: a clean run said None ("not known") on the H200
    log = "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
    assert sanitizer.parse("racecheck", log) == ([], 0)


def test_synccheck(data_dir):
    issues, count = sanitizer.parse("synccheck", (data_dir / "synccheck_barrier.txt").read_text())
    assert count == 1 and issues[0].kind == "barrier" and issues[0].line == 14


def test_findings_land_on_the_users_lines(data_dir, tmp_path):
    cu = data_dir / "shared_race.cu"
    text = cu.read_text()
    log = (data_dir / "racecheck_race.txt").read_text().replace("/work/tests/runtime/data/shared_race.cu", str(cu))
    issues, _ = sanitizer.parse("racecheck", log)
    findings = sanitizer.sanitizer_findings(str(cu), text, issues)
    assert [(f.code, f.line) for f in findings] == [("CL905", 7)]
    assert findings[0].related[0].span.line == 8
    assert "[16320 hazards]" in findings[0].message


def test_findings_skip_other_files(data_dir):
    issues, _ = sanitizer.parse("synccheck", (data_dir / "synccheck_barrier.txt").read_text())
    assert sanitizer.sanitizer_findings(str(data_dir / "transpose.cu"), "x\n", issues) == []


def test_memcheck_thread_in_message(data_dir):
    cu = data_dir / "illegal_access.cu"
    log = (data_dir / "memcheck_illegal.txt").read_text().replace("/work/tests/runtime/data/illegal_access.cu", str(cu))
    issues, _ = sanitizer.parse("memcheck", log)
    findings = sanitizer.sanitizer_findings(str(cu), cu.read_text(), issues)
    assert len(findings) == 2 and findings[0].line == 6
    assert "(thread (0,0,0) in block (0,0,0))" in findings[0].message


def test_unknown_tool_is_a_clear_error():
    assert "unknown sanitizer tool" in sanitizer.run_sanitizer("x.cu", "leakcheck").error
