"""Suppression comments. `apply_suppressions` is a pure function of (text, findings, path), so the findings here
are plain values at chosen lines; the end-to-end tests at the bottom use the real analyzer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cudalens.analysis.findings import Finding, Severity, Span
from cudalens.analysis.suppression import apply_suppressions, parse_suppressions, unused_suppressions


def at(line: int, code: str = "CL101", path: str = "k.cu") -> Finding:
    return Finding(path, code, "some-rule", Severity.WARNING, "message", Span(line, 5, line, 20))


def kept(text: str, findings: list[Finding], path: str = "k.cu") -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in apply_suppressions(text, findings, path)]


CU = """\
__global__ void k(float* out, const float* in, int n) {
    out[threadIdx.x * n] = 0;  // cudalens: ignore[CL101]
    // cudalens: ignore[CL301, CL2]
    out[threadIdx.x * n] = in[threadIdx.x * n];
    out[threadIdx.x * 2] = 1;  // cudalens: ignore[CL3]
    out[threadIdx.x * 3] = 2;
}
"""


def test_trailing_comment_covers_its_own_line_and_only_the_named_codes():
    assert kept(CU, [at(2), at(2, "CL102")]) == [(2, "CL102")]


def test_comment_alone_on_its_line_covers_the_line_below():
    assert kept(CU, [at(4, "CL301"), at(4, "CL201"), at(4, "CL101")]) == [(4, "CL101")]


def test_trailing_comment_does_not_reach_the_next_line():
    assert kept(CU, [at(6, "CL301")]) == [(6, "CL301")]


def test_prefix_covers_every_code_under_it():
    assert kept(CU, [at(5, "CL301"), at(5, "CL302"), at(5, "CL101")]) == [(5, "CL101")]


def test_bare_ignore_covers_every_code():
    text = "x;  // cudalens: ignore\ny;\n"
    assert kept(text, [at(1, "CL101"), at(1, "CL905"), at(2)]) == [(2, "CL101")]


def test_file_level_ignore_covers_the_whole_file():
    text = "// cudalens: ignore-file[CL1]\n\n\nx;\n"
    assert kept(text, [at(4, "CL101"), at(4, "CL102"), at(2, "CL301")]) == [(2, "CL301")]
    assert kept("/* cudalens: ignore-file */\nx;\n", [at(2, "CL301"), at(9, "CL905")]) == []


def test_python_hash_comments_and_cuda_comments_inside_embedded_strings():
    py = 'src = r"""\n__global__ void k() {\n    // cudalens: ignore[CL301]\n    tile[tx][k];\n}\n"""\nx = 1  # cudalens: ignore[CL6]\n'
    assert kept(py, [at(4, "CL301", "m.py"), at(7, "CL601", "m.py"), at(2, "CL101", "m.py")], "m.py") == [
        (2, "CL101")
    ]


def test_a_hash_in_cuda_is_a_preprocessor_line_not_a_comment():
    assert kept("# cudalens: ignore[CL101]\nx;\n", [at(1), at(2)]) == [(1, "CL101"), (2, "CL101")]


def test_codes_are_case_insensitive_and_spacing_is_free():
    assert kept("x; //cudalens:ignore[ cl101 ,cl3 ]\n", [at(1, "CL101"), at(1, "CL302")]) == []


def test_unknown_or_empty_code_lists_silence_nothing_and_are_reported():
    text = "x; // cudalens: ignore[CL10x]\ny; // cudalens: ignore[]\n"
    assert kept(text, [at(1), at(2)]) == [(1, "CL101"), (2, "CL101")]
    assert parse_suppressions(text, "k.cu")[0].unknown == ("CL10X",)


def test_unused_suppressions_are_those_that_silence_nothing():
    unused = unused_suppressions(CU, [at(2), at(4, "CL301")], "k.cu")
    assert [s.line for s in unused] == [5]


def test_lines_are_counted_the_way_the_parser_counts_them():
    # \f and \u2028 are line breaks for str.splitlines but not for a C parser
    text = "a;\f b;\u2028 c;\nx; // cudalens: ignore[CL101]\n"
    assert kept(text, [at(2), at(3)]) == [(3, "CL101")]


@given(st.text(), st.lists(st.integers(min_value=1, max_value=50), max_size=5))
def test_any_text_is_handled(text, lines):
    findings = [at(n) for n in lines]
    assert len(apply_suppressions(text, findings, "k.cu")) <= len(findings)
    apply_suppressions("# cudalens: ignore\n" + text, findings, "k.py")


def test_suppression_in_a_real_kernel(tmp_path, cli, kernel):
    source = kernel("strided_scale.cu")
    path = source.copy_to(tmp_path)
    assert source.codes[0] in cli("check", path.name, cwd=tmp_path).out
    path.write_text(source.suppressed_text)
    result = cli("check", path.name, cwd=tmp_path)
    assert (result.code, result.out) == (0, "All checks passed!\n")


def test_suppression_in_a_real_python_file(tmp_path, cli, kernel):
    source = kernel("inline_transpose.py")
    path = source.copy_to(tmp_path)
    assert source.codes[0] in cli("check", path.name, cwd=tmp_path).out
    path.write_text("# cudalens: ignore-file[CL1]\n" + source.text)
    assert cli("check", path.name, cwd=tmp_path).out == "All checks passed!\n"
    path.write_text(source.suppressed_text)
    assert cli("check", path.name, cwd=tmp_path).out == "All checks passed!\n"
