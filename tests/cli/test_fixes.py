"""`cudalens check --fix/--diff`: fixes applied to text (pure, with fix values), then for real on a kernel whose
fix the analyzer offers (CL301: pad the shared tile's rows)."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudalens.analysis.api import analyze_text
from cudalens.analysis.findings import Finding, Fix, Severity, Span, TextEdit
from cudalens.cli.fixes import apply_fixes

TEXT = "__shared__ float tile[32][32];\nfloat x = 1.0;\n"


def finding(line: int, edits: tuple[TextEdit, ...], applicability: str = "safe") -> Finding:
    return Finding(
        "k.cu",
        "CL301",
        "r",
        Severity.WARNING,
        "m",
        Span(line, 1, line, 2),
        fix=Fix("f", edits, applicability),
    )


def edit(line: int, col: int, end_col: int, new: str, end_line: int | None = None) -> TextEdit:
    return TextEdit(Span(line, col, end_line or line, end_col), new)


def test_safe_fixes_apply_and_unsafe_ones_only_when_asked():
    pad = finding(1, (edit(1, 27, 29, "33"),))
    literal = finding(2, (edit(2, 14, 14, "f"),), "unsafe")
    assert apply_fixes(TEXT, [pad, literal]).text == "__shared__ float tile[32][33];\nfloat x = 1.0;\n"
    both = apply_fixes(TEXT, [pad, literal], unsafe=True)
    assert both.text == "__shared__ float tile[32][33];\nfloat x = 1.0f;\n" and len(both.fixed) == 2


def test_overlapping_fixes_leave_the_later_one_for_another_run():
    first = finding(1, (edit(1, 22, 30, "[64][65]"),))
    second = finding(1, (edit(1, 27, 29, "33"),))
    outcome = apply_fixes(TEXT, [second, first])
    assert outcome.text.startswith("__shared__ float tile[64][65];") and outcome.fixed == (first,)


def test_a_fix_whose_edits_fall_outside_the_text_is_skipped_whole():
    broken = finding(1, (edit(1, 27, 29, "33"), edit(9, 1, 2, "x")))
    assert apply_fixes(TEXT, [broken]).text == TEXT


def test_edits_may_span_lines_and_keep_crlf_line_ends():
    text = "a\r\nbc\r\nd\r\n"
    joined = finding(1, (edit(1, 2, 1, "", end_line=2),))
    assert apply_fixes(text, [joined]).text == "abc\r\nd\r\n"


def test_fix_writes_the_file_and_reports_what_remains(tmp_path, cli, kernel):
    source = kernel("row_sums_bank_conflict.cu").copy_to(tmp_path)
    before = source.read_text()
    listed = cli("check", cwd=tmp_path)
    assert listed.code == 1 and "[*] 1 fixable with the `--fix` option." in listed.out

    diff = cli("check", "--diff", cwd=tmp_path)
    assert diff.code == 1 and source.read_text() == before
    assert (
        "-    __shared__ float tile[32][32];" in diff.out
        and "+    __shared__ float tile[32][33];" in diff.out
    )

    fixed = cli("check", "--fix", cwd=tmp_path)
    assert "tile[32][33]" in source.read_text()
    assert fixed.code == 0 and "Found 1 finding (1 fixed, 0 remaining)." in fixed.out
    assert cli("check", "--diff", cwd=tmp_path).out == ""


def test_a_file_that_is_not_utf8_is_never_rewritten(tmp_path, cli, kernel):
    source = kernel("row_sums_bank_conflict.cu").copy_to(tmp_path)
    data = source.read_bytes().replace(b"// Each lane", b"// \xff Each lane")
    source.write_bytes(data)
    result = cli("check", "--fix", cwd=tmp_path)
    assert source.read_bytes() == data
    assert result.code == 1 and "not fixed, the file is not valid UTF-8" in result.err


def test_a_byte_order_mark_survives_a_fix(tmp_path, cli, kernel):
    source = kernel("row_sums_bank_conflict.cu").copy_to(tmp_path)
    source.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())
    cli("check", "--fix", cwd=tmp_path)
    assert (
        source.read_bytes().startswith(b"\xef\xbb\xbf// Each lane") and b"tile[32][33]" in source.read_bytes()
    )


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_a_utf16_or_utf32_file_is_fixed_in_its_own_encoding(tmp_path, cli, kernel, encoding):
    source = kernel("row_sums_bank_conflict.cu").copy_to(tmp_path)
    source.write_bytes(source.read_text().encode(encoding))  # with its byte order mark
    fixed = cli("check", "--fix", cwd=tmp_path)
    assert fixed.code == 0 and "1 fixed" in fixed.out
    assert source.read_bytes().startswith(codecs.BOM_UTF32_LE if encoding == "utf-32" else codecs.BOM_UTF16_LE)
    assert "tile[32][33]" in source.read_bytes().decode(encoding)


FIXTURE = Path(__file__).parent / "fixtures" / "row_sums_bank_conflict.cu"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ends=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=18, max_size=18),
       lone_cr=st.integers(min_value=0, max_value=17))
def test_fix_writes_the_right_line_whatever_the_line_ends(tmp_path_factory, ends, lone_cr):
    """Issue 34, item 1: with one lone CR `--fix` wrote `TILE + 1` into the wrong line and said "1 fixed". The
    fixer counts lines as the analyzer does (LSP's model), and what it writes is checked: outside the fix the
    bytes are the file's, and the finding is gone."""
    from cudalens.cli.main import main

    lines = FIXTURE.read_text().split("\n")[:-1]
    assert len(lines) == len(ends)
    lines[lone_cr] += "\r"  # one more lone CR at a line's end: a line end to LSP and the analyzer
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    folder = tmp_path_factory.mktemp("fix")
    path = folder / "k.cu"
    path.write_bytes(text.encode())
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        assert main(["check", "--fix", "k.cu"]) == 0
    finally:
        os.chdir(cwd)
    after = path.read_bytes().decode()
    assert after != text  # a lone CR at a line's end is one more line end: the fix still applies
    assert after.replace("tile[32][33]", "tile[32][32]", 1) == text  # the fix, and nothing else
    assert "CL301" not in [f.code for f in analyze_text(str(path), after).findings]
