"""The C++ lexing device_only and jobs_lib/split_source share (worker/child/cpp_source.py)."""

from __future__ import annotations

from cudalens.worker.child.cpp_source import (
    TORCH_MARKERS,
    closing_bracket,
    directive_end,
    joined_launches,
    skip_comment_or_literal,
)


def test_comments_and_literals_end_where_cpp_says() -> None:
    text = 'a // x\nb /* y\n */ c "q\\"}" \'}\' "open\nd'
    assert text[skip_comment_or_literal(text, text.index("//")):].startswith("\nb")
    assert text[skip_comment_or_literal(text, text.index("/*")):].startswith(" c")
    assert text[skip_comment_or_literal(text, text.index('"q')):].startswith(" '")
    assert text[skip_comment_or_literal(text, text.index("'}'")):].startswith(' "open')
    assert text[skip_comment_or_literal(text, text.index('"open')):] == "d"  # unterminated: ends with its line
    assert skip_comment_or_literal(text, 0) == 0
    assert skip_comment_or_literal('"', 0) == 1


def test_a_directive_runs_through_its_continuations() -> None:
    text = "#define F(x) \\\n  (x)\nint y;"
    assert text[directive_end(text, 0):] == "\nint y;"


def test_the_closing_bracket_skips_what_is_not_code() -> None:
    text = 'f(a, ")", /* ) */ g(b)) + 1'
    assert closing_bracket(text, 1) == text.index(" + 1") - 1
    assert closing_bracket("{ { }", 0) == 5  # never closed: the end


def test_the_worker_side_splitter_uses_the_same_lexing() -> None:
    from cudalens.worker.child import cpp_source
    from cudalens.worker.child.lib import split_source as split

    assert split.cpp_source is cpp_source and cpp_source.TORCH_MARKERS is TORCH_MARKERS
    items = split.top_level_items('// c\nconst char* s = "};";\n__global__ void k(int* p) { p[0] = \'}\'; }\n')
    assert [(i.line, i.text.split()[0]) for i in items] == [(2, "const"), (3, "__global__")]


def test_a_spaced_launch_is_joined_and_every_offset_stays() -> None:
    text = "k<< <grid, 256 >> >(x, n);\nk<<<g, b>>>(x); a << 2 > 1; f<<\t<1, 1>>\t>();"
    joined = joined_launches(text)
    assert joined == "k<<< grid, 256 >>> (x, n);\nk<<<g, b>>>(x); a << 2 > 1; f<<<\t1, 1>>>\t();"
    assert len(joined) == len(text)
    assert joined_launches("int a = b << c;") == "int a = b << c;"
