"""Line separators that Python's `str.splitlines` counts but LSP does not (`\\f`, `\\v`, `\\x1c`-`\\x1e`, `\\x85`,
U+2028, U+2029), and CR-only line ends: one line model for the analysis and the server (analysis/positions.py).
Before it, a finding after such a character was reported on the wrong line, the Suppress fix put its comment in
the middle of an expression (`in[(y   // cudalens: ignore[CL101]* n) + x]`), and a CR-only file got no findings."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
from lsptools import RawConnection, apply_edits, line_starts, raw_fixture  # noqa: F401 - the `raw` fixture

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.api import analyze_text
from cudalens.analysis.findings import Finding, Span
from cudalens.analysis.positions import split_lines
from cudalens.analysis.syntax_check import SyntaxBaseline
from cudalens.server.actions import ActionContext, code_actions, comment_marker
from cudalens.server.convert import Positions

FIXTURES = Path(__file__).parent / "fixtures"
SEPARATORS = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def lsp_lines(text: str) -> list[str]:
    """The lines as an editor has them (lsptools' own splitter), without their line ends."""
    starts = line_starts(text)
    ends = [*starts[1:], len(text)]
    return [text[a:b].rstrip("\r\n") for a, b in zip(starts, ends, strict=True)]




def test_suppress_lands_at_the_end_of_the_line_an_editor_shows(raw: RawConnection, tmp_path):
    text = (FIXTURES / "formfeed_mid_expression.cu").read_bytes().decode()
    uri = raw.open(tmp_path / "k.cu", text)
    [diagnostic] = raw.diagnostics(uri, 1)
    line = diagnostic["range"]["start"]["line"]
    assert "out[x * n + y]" in lsp_lines(text)[line]  # the finding's own line, as the editor counts lines
    actions = raw.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diagnostic["range"],
                                                      "context": {"diagnostics": [diagnostic]}})["result"]
    [suppress] = [a for a in actions if a["title"].startswith("Suppress")]
    edits = [types.TextEdit(types.Range(types.Position(**e["range"]["start"]), types.Position(**e["range"]["end"])),
                            e["newText"]) for e in suppress["edit"]["documentChanges"][0]["edits"]]
    after = apply_edits(text, edits)
    assert lsp_lines(after)[line] == lsp_lines(text)[line] + "  // cudalens: ignore[CL101]"
    assert [x for i, x in enumerate(lsp_lines(after)) if i != line] == \
        [x for i, x in enumerate(lsp_lines(text)) if i != line]
    assert ts.error_count(ts.parse_cuda(after.encode())) == 0


def test_a_cr_only_file_gets_its_findings(raw: RawConnection, tmp_path):
    text = (FIXTURES / "cr_only.cu").read_bytes().decode()
    assert "\n" not in text
    uri = raw.open(tmp_path / "cr.cu", text)
    [diagnostic] = raw.diagnostics(uri, 1)
    assert diagnostic["code"] == "CL101"
    assert lsp_lines(text)[diagnostic["range"]["start"]["line"]].strip().startswith("out[x * n + y]")


# --- every edit the server offers, over random text ----------------------------------------------------------
KERNEL = [
    "__global__", "void", "k(const", "float*", "in,", "float*", "out,", "int", "n)", "{",
    "__shared__", "float", "tile[32][32];", "int", "x", "=", "blockIdx.x", "*", "blockDim.x", "+", "threadIdx.x;",
    "tile[threadIdx.x][0]", "=", "in[x", "*", "n];", "__syncthreads();",
    "out[x", "*", "n]", "=", "tile[0][threadIdx.x]", "+", "in[(x", "*", "n)", "+", "1];", "}",
    "void", "launch(const", "float*", "in,", "float*", "out,", "int", "n)", "{", "k<<<n,", "32>>>(in,", "out,", "n);", "}",
]
odd = st.text(st.sampled_from([*SEPARATORS, "a", " ", "é", "😀", "\t"]), max_size=6)
gap = st.one_of(
    st.sampled_from([" ", "\n", "\r\n", "\r", "\t", "\f", "\v", "  "]),
    odd.map(lambda t: f" /*{t}*/ "),
    st.tuples(odd, st.sampled_from(["\n", "\r\n", "\r"])).map(lambda p: f" //{p[0]}{p[1]}"),
)


def offered_edits(text: str, path: str) -> list[tuple[str, list[types.TextEdit], Finding | None]]:
    """Every code action with an edit the server offers over the whole text: (title, edits, the finding whose
    fix it is, for a rule's quick fix)."""
    report = analyze_text(path, text)
    pos = Positions(split_lines(text), PositionCodec())
    kind = "python" if path.endswith(".py") else "cuda"
    ctx = ActionContext("file:///k", 1, pos, True, comment_marker(kind, report.embedded_sources),
                        SyntaxBaseline(text, path))
    fixes = {f"{f.fix.message} ({f.code})": f for f in report.findings if f.fix}
    return [(a.title, a.edit.document_changes[0].edits, fixes.get(a.title))
            for a in code_actions(report.findings, Span(1, 1, len(pos.lines) + 1, 1), ctx, None)]


def check_every_offer(text: str, path: str) -> None:
    before = SyntaxBaseline(text, path).errors
    for title, edits, finding in offered_edits(text, path):
        after = apply_edits(text, edits)
        assert SyntaxBaseline(after, path).errors <= before, title
        old, new = lsp_lines(text), lsp_lines(after)
        if title.startswith("Suppress"):
            changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
            assert len(old) == len(new) and len(changed) == 1, title
            assert new[changed[0]].startswith(old[changed[0]].split("cudalens: ignore[")[0]), title
            code = title.split()[1]
            assert code not in {f.code for f in analyze_text(path, after).findings if f.span.line == changed[0] + 1}
        elif finding is not None:  # a rule's fix: exactly its spans change (character columns on editor lines)
            starts = line_starts(text)
            expected = text
            for e in sorted(finding.fix.edits, key=lambda e: e.span, reverse=True):
                a = starts[e.span.line - 1] + e.span.column - 1
                b = starts[e.span.end_line - 1] + e.span.end_column - 1
                expected = expected[:a] + e.new_text + expected[b:]
            assert after == expected, title


@seed(20261201)
@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(gap, min_size=len(KERNEL), max_size=len(KERNEL)))
def test_every_offered_edit_keeps_the_rest_of_a_cuda_file(gaps):
    text = "".join(token + sep for token, sep in zip(KERNEL, gaps, strict=True))
    check_every_offer(text, "/k.cu")


@seed(20261201)
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(gap, min_size=len(KERNEL), max_size=len(KERNEL)), odd, st.sampled_from(["\n", "\r\n", "\r"]))
def test_every_offered_edit_keeps_the_rest_of_a_python_file(gaps, comment, eol):
    cuda = "".join(token + sep for token, sep in zip(KERNEL, gaps, strict=True))
    cuda = cuda.replace("\\", "").replace('"""', "")
    text = eol.join(["import torch", f"# {comment}", "from torch.utils.cpp_extension import load_inline",
                     f'src = """{cuda}"""', 'mod = load_inline(name="k", cpp_sources="", cuda_sources=src)', ""])
    check_every_offer(text, "/k.py")


def test_the_property_tests_see_offers():
    """The random texts above do get findings with fixes and Suppress actions (not a vacuous property)."""
    text = "".join(token + " " for token in KERNEL)
    titles = [title for title, _, _ in offered_edits(text, "/k.cu")]
    assert any(t.startswith("Suppress") for t in titles) and any("Pad" in t for t in titles), titles
