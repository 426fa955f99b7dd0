"""The plain functions behind the handlers, without a server."""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cudalens.analysis.findings import Span
from cudalens.server.actions import comment_marker, suppression_edit, wanted
from cudalens.server.convert import Positions
from cudalens.server.documents import Analysed, DocState, may_contain_cuda, served_kind
from cudalens.server.scheduler import Priority, Scheduler
from cudalens.server.settings import ServerSettings, parse_settings, settings_from_initialization_options
from cudalens.server.watch import ignored_dir, relevant_file

LINES = ["int a; // é😀 x = out[i];\n", "\n", "last"]


def test_positions_count_utf16_units_and_round_trip():
    pos = Positions(LINES, PositionCodec(types.PositionEncodingKind.Utf16))
    column = LINES[0].index("x") + 1  # 1-based characters
    assert pos.to_lsp(1, column) == types.Position(0, column - 1 + 1)  # the emoji is two units
    assert pos.from_lsp(types.Position(0, column)) == (1, column)


def test_positions_in_utf8_when_the_client_chose_it():
    pos = Positions(LINES, PositionCodec(types.PositionEncodingKind.Utf8))
    column = LINES[0].index("x") + 1
    assert pos.to_lsp(1, column).character == len(LINES[0][: column - 1].encode())


def test_positions_clamp_out_of_range_input():
    pos = Positions(LINES, PositionCodec())
    assert pos.to_lsp(99, 99) == types.Position(2, 4)
    assert pos.to_lsp(0, -5) == types.Position(0, 0)
    assert pos.from_lsp(types.Position(10_000, 10_000)) == (3, 5)
    assert Positions([], PositionCodec()).to_lsp(3, 3) == types.Position(0, 0)
    assert pos.span(types.Range(types.Position(0, 0), types.Position(99, 0))) == Span(1, 1, 3, 1)


def test_suppression_extends_an_existing_comment():
    pos = Positions(["x = 1;  // cudalens: ignore[CL301]\n"], PositionCodec())
    edit, where = suppression_edit(pos.lines[0], 1, "CL101", "//", pos)
    assert edit.new_text == ", CL101"
    assert edit.range.start.character == pos.lines[0].index("]")
    assert where == Span(1, pos.lines[0].index("]") + 1, 1, pos.lines[0].index("]") + 1)
    fresh, where = suppression_edit("y = 2;\n", 1, "CL101", "#", Positions(["y = 2;\n"], PositionCodec()))
    assert fresh.new_text == "  # cudalens: ignore[CL101]" and fresh.range.start.character == 6
    assert where == Span(1, 7, 1, 7)


def test_python_lines_inside_cuda_strings_get_cuda_comments():
    # src = """__global__ void k() {   (line 5)
    # }                                (line 6)
    # """                              (line 7: the line's end is Python, after the string)
    marker = comment_marker("python", [("__global__ void k() {\n}\n", 5, 7)])
    assert [marker(n) for n in (4, 5, 6, 7, 8)] == ["#", "//", "//", "#", "#"]
    assert comment_marker("cuda", [])(1) == "//"


def test_code_action_kind_filter():
    assert wanted(None, "quickfix") and wanted(["source.fixAll"], "source.fixAll.cudalens")
    assert not wanted(["source.fixAll"], "quickfix") and not wanted(["source.fixAllX"], "source.fixAll.cudalens")


def test_which_files_are_served():
    assert served_kind("/a/k.cu") == "cuda" and served_kind("/a/k.cuh") == "cuda"
    assert served_kind("/a/m.py") == "python" and served_kind("/a/m.cpp") is None
    assert served_kind("/a/m.cpp", "cuda-cpp") is None  # a file name wins over the language id
    assert served_kind("untitled:Untitled-1", "cuda-cpp") == "cuda"  # an unsaved buffer has only its language
    assert not may_contain_cuda("python", "import os\n")
    assert may_contain_cuda("python", "from torch.utils.cpp_extension import load_inline\n")
    assert may_contain_cuda("python", "class ModelNew(nn.Module): ...\n")


def test_settings_defaults_and_nested_camel_case():
    parsed = parse_settings({"onSave": {"compile": True}, "worker": {"timeoutSeconds": 30}, "optimize": {"rounds": 3}})
    assert parsed.errors == []
    assert parsed.settings.on_save.compile and parsed.settings.worker.timeout_seconds == 30.0
    assert parsed.settings.optimize.rounds == 3 and parsed.settings.coder.api_key_env == "OPENAI_API_KEY"
    assert parse_settings(None).settings == ServerSettings()
    nested = settings_from_initialization_options({"settings": {"cudalens": {"arch": "sm_80"}}})
    assert nested.settings.arch == "sm_80"


def test_bad_settings_are_reported_and_defaulted():
    parsed = parse_settings({"select": 5, "optimize": {"rounds": "ten"}, "logLevel": "loud", "editorOnly": 1})
    assert parsed.settings == ServerSettings()
    assert len(parsed.errors) == 3
    assert parsed.unknown == ["editorOnly"]
    assert parse_settings([1, 2]).errors  # not an object at all


def test_watch_filters():
    assert ignored_dir(".git") and ignored_dir("build") and ignored_dir("__pycache__")
    assert ignored_dir("cudalens.egg-info") and not ignored_dir("src")
    assert relevant_file("/w/src/tile.cuh") and relevant_file("/w/pyproject.toml") and relevant_file("/w/ref.py")
    assert not relevant_file("/w/notes.txt")


async def test_scheduler_newest_version_wins_and_closed_documents_get_nothing():
    delivered: list[tuple[str, int]] = []

    def analyse(state: DocState, version, text: str) -> Analysed:
        time.sleep(0.02)  # a slow analysis, in the analysis thread
        return Analysed(version, None, [text])

    scheduler = Scheduler(analyse, lambda s, r: delivered.append((s.uri, r.version)), lambda s, e: None)
    doc = DocState("file:///a.cu", "/a.cu", "cuda", 1, "v1")
    gone = DocState("file:///b.cu", "/b.cu", "cuda", 1, "v1")
    scheduler.request(gone, 0.0)
    gone.closed = True
    for version in range(1, 20):
        doc.version, doc.text = version, f"v{version}"
        scheduler.request(doc, 0.0 if version == 1 else 0.005)
        await asyncio.sleep(0.001)
    while scheduler.pending(doc.uri):
        await asyncio.sleep(0.01)
    scheduler.close()
    assert delivered[-1] == ("file:///a.cu", 19)
    assert [v for _, v in delivered] == sorted(v for _, v in delivered)
    assert all(uri == "file:///a.cu" for uri, _ in delivered)


async def test_an_edit_jumps_the_queue_of_freshly_opened_files():
    order: list[str] = []

    def analyse(state: DocState, version, text: str) -> Analysed:
        time.sleep(0.02)
        return Analysed(version, None, [text])

    scheduler = Scheduler(analyse, lambda s, r: order.append(s.uri), lambda s, e: None)
    opened = [DocState(f"file:///{i}.cu", f"/{i}.cu", "cuda", 1, "x") for i in range(6)]
    for doc in opened:
        scheduler.request(doc, 0.0, Priority.OPEN)
    await asyncio.sleep(0)  # the newest open is now running
    edited = opened[2]
    edited.version = 2
    scheduler.request(edited, 0.0, Priority.EDIT)
    while any(scheduler.pending(d.uri) for d in opened):
        await asyncio.sleep(0.01)
    scheduler.close()
    assert order[:2] == [opened[-1].uri, edited.uri], order  # right after the job that was already running
    assert sorted(order) == sorted(d.uri for d in opened)
