"""CUDA inside Python: every way a user hands a source to load_inline or CuPy, and positions mapped back to the
exact .py line and column, escapes and implicit concatenation included."""

from __future__ import annotations

from cudalens.analysis.api import analyze_text
from cudalens.analysis.embedded import extract_cuda_sources

KERNEL = "__global__ void k(const float* a, float* b) { b[threadIdx.x] = a[threadIdx.x * 2]; }"


def _position_of(py: str, needle: str) -> tuple[int, int]:
    for i, line in enumerate(py.splitlines(), 1):
        if needle in line:
            return i, line.index(needle) + 1
    raise AssertionError(needle)


def test_load_inline_with_variables_lists_and_literals() -> None:
    py = (
        "from torch.utils.cpp_extension import load_inline\n"
        f'cuda_src = """\n{KERNEL}\n"""\n'
        'cpp_src = "void k_launch();"\n'
        "m = load_inline(name='m', cpp_sources=[cpp_src], cuda_sources=[cuda_src, '__global__ void z(){}'])\n"
    )
    sources = extract_cuda_sources(py)
    assert [(s.kind, s.name) for s in sources] == [("cuda", "cuda_src"), ("cpp", "cpp_src"), ("cuda", None)]
    assert sources[0].text.strip() == KERNEL


def test_finding_lands_on_the_python_line_and_column() -> None:
    py = f'import torch\nsrc = """\n// comment\n{KERNEL}\n"""\nmod = torch.utils.cpp_extension.load_inline(name="x", cpp_sources="", cuda_sources=src)\n'
    report = analyze_text("model_new.py", py)
    assert report.is_cuda
    [finding] = [f for f in report.findings if f.code == "CL101"]
    assert (finding.line, finding.column) == _position_of(py, "a[threadIdx.x * 2]")


def test_escapes_and_implicit_concatenation() -> None:
    py = (
        "import cupy as cp\n"
        "k = cp.RawKernel(\n"
        '    "extern \\"C\\" __global__ void k(const float* a, float* b) {\\n"\n'
        '    "  b[threadIdx.x] = a[threadIdx.x * 4];\\n"\n'
        '    "}\\n", "k")\n'
    )
    [source] = extract_cuda_sources(py)
    assert 'extern "C"' in source.text and source.origin == "RawKernel"
    report = analyze_text("cupy_kernel.py", py)
    [finding] = [f for f in report.findings if f.code == "CL101"]
    assert (finding.line, finding.column) == _position_of(py, "a[threadIdx.x * 4]")


def test_raw_module_keyword_code() -> None:
    py = f"import cupy\nmod = cupy.RawModule(code=r'''{KERNEL}''')\n"
    [source] = extract_cuda_sources(py)
    assert source.origin == "RawModule" and source.text == KERNEL
    assert source.to_file_position(1, 1) == _position_of(py, "__global__")


def test_plain_python_is_not_cuda() -> None:
    report = analyze_text("train.py", "import torch\nx = torch.randn(3)\nprint('__global__ is a word')\n")
    assert not report.is_cuda and report.findings == []


def test_non_ascii_columns_are_characters() -> None:
    py = f'# é\ns = """// naïve kernel — ünïcödé\n{KERNEL}"""\nload_inline(name="x", cpp_sources="", cuda_sources=s)\n'
    report = analyze_text("u.py", py)
    [finding] = [f for f in report.findings if f.code == "CL101"]
    assert (finding.line, finding.column) == _position_of(py, "a[threadIdx.x * 2]")
