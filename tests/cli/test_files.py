"""Which files `cudalens check` looks at, and how their bytes are read."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from cudalens.workspace.files import decode_source, discover_files, matches_exclude, read_source


def make(root: Path, *names: str, content: bytes = b"// x\n") -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def found(root: Path, *paths: Path, excluded=lambda _: False) -> list[str]:
    return [p.relative_to(root).as_posix() for p in discover_files(paths or [root], excluded).files]


def test_walks_sources_and_skips_hidden_build_and_environment_folders(tmp_path):
    make(
        tmp_path,
        "a.cu", "b.cuh", "c.py", "notes.txt", "d.cpp",
        "src/k.cu",
        ".hidden/h.cu", ".venv/lib/v.py", "build/b.cu", "dist/d.cu", "__pycache__/p.py",
        "node_modules/n.cu", "env/lib/site-packages/s.py", "venv/lib/x.py",
    )  # fmt: skip
    assert found(tmp_path) == ["a.cu", "b.cuh", "c.py", "src/k.cu"]


def test_a_folder_named_like_a_source_file_is_a_folder(tmp_path):
    make(tmp_path, "x.cu/inner.cu", "x.cu/readme.md")
    assert found(tmp_path) == ["x.cu/inner.cu"]
    assert found(tmp_path, tmp_path / "x.cu") == ["x.cu/inner.cu"]


def test_files_named_explicitly_are_taken_even_in_skipped_folders(tmp_path):
    make(tmp_path, "build/gen.cu", ".hidden/h.cu")
    assert found(tmp_path, tmp_path / "build/gen.cu", tmp_path / ".hidden") == [
        "build/gen.cu",
        ".hidden/h.cu",
    ]


def test_each_file_once_and_missing_paths_reported(tmp_path):
    make(tmp_path, "a.cu")
    discovery = discover_files([tmp_path, tmp_path / "a.cu", tmp_path / "gone.cu"])
    assert [p.name for p in discovery.files] == ["a.cu"]
    assert discovery.missing == [tmp_path / "gone.cu"]


def test_exclude_prunes_folders_and_files(tmp_path):
    make(tmp_path, "a.cu", "vendor/v.cu", "src/gen_x.cu", "src/k.cu", "src/k.cuh")

    def excluded(path: Path) -> bool:
        return matches_exclude(path, ["vendor", "src/gen_*", "*.cuh"], tmp_path)

    assert found(tmp_path, excluded=excluded) == ["a.cu", "src/k.cu"]


def test_exclude_patterns_match_names_relative_paths_and_parent_folders(tmp_path):
    path = tmp_path / "third_party" / "cutlass" / "gemm.cu"
    assert matches_exclude(path, ["third_party"], tmp_path)
    assert matches_exclude(path, ["third_party/*/gemm.cu"], tmp_path)
    assert matches_exclude(path, ["gemm.*"], tmp_path)
    assert not matches_exclude(path, ["cutlass2", "", "  "], tmp_path)


def test_symlinked_folder_cycles_do_not_loop(tmp_path):
    make(tmp_path, "a/k.cu")
    (tmp_path / "a" / "loop").symlink_to(tmp_path / "a", target_is_directory=True)
    assert found(tmp_path) == ["a/k.cu"]


def test_bytes_that_are_not_utf8_become_replacement_characters(tmp_path):
    path = tmp_path / "latin1.cu"
    path.write_bytes(b"// caf\xe9 \xff\xfe\x00 end\n")
    text = read_source(path)
    assert "\ufffd" in text and text.endswith("end\n")


def test_a_byte_order_mark_is_dropped_so_columns_match_the_editor(tmp_path):
    path = tmp_path / "bom.cu"
    path.write_bytes(b"\xef\xbb\xbf__global__ void k() {}\n")
    assert read_source(path).startswith("__global__")


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (codecs.BOM_UTF8 + "// é\n".encode(), "utf-8"),
        ("// é\n".encode("utf-16"), "utf-16-le"),
        (codecs.BOM_UTF16_BE + "// é\n".encode("utf-16-be"), "utf-16-be"),
        ("// é\n".encode("utf-32"), "utf-32-le"),
        (codecs.BOM_UTF32_BE + "// é\n".encode("utf-32-be"), "utf-32-be"),
    ],
)
def test_text_is_decoded_by_its_byte_order_mark(data, encoding):
    source = decode_source(data)
    assert (source.text, source.encoding, source.bom, source.lossless) == ("// é\n", encoding, True, True)


def test_mostly_nul_bytes_are_not_text_but_one_nul_is():
    assert decode_source("__global__ void k() {}\n".encode("utf-16-le")).undecodable is not None
    assert decode_source(b"\x7fELF\x02\x01\x01" + bytes(64)).undecodable is not None
    one = decode_source(b"// a NUL: \x00 in a comment\n__global__ void k() {}\n")
    assert one.undecodable is None and "\x00" in one.text  # the analyzer reads it as a space
