"""Real nvcc compiles: messages on the right line of the right file, resource usage, spills, the cache."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from cudalens.analysis.config import AnalysisConfig
from cudalens.profiler.compile import CompileOptions, compile_cuda, compile_python
from cudalens.profiler.compile_findings import (
    LaunchShape,
    compile_findings,
    compile_report,
    findings_from_results,
)

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (the CUDA toolkit) is not installed")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))


def write(folder: Path, name: str, text: str) -> tuple[str, str]:
    body = textwrap.dedent(text).lstrip("\n")
    (folder / name).write_text(body)
    return str(folder / name), body


def test_errors_and_warnings_land_on_their_lines_and_columns(tmp_path):
    path, text = write(tmp_path, "k.cu", """
        __global__ void add(float* out, const float* a, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            int unused;
            if (i < n) out[i] = a[i] + missing_var;
        }
        """)
    result = compile_cuda(path, text)
    assert result.status == "error"
    by_line = {m.line: m for m in result.messages}
    err = by_line[4]
    assert err.severity == "error" and 'identifier "missing_var" is undefined' in err.message
    assert text.splitlines()[3][err.column - 1 : err.end_column - 1] == "missing_var"
    warn = by_line[3]
    assert warn.severity == "warning" and warn.code == "177-D"
    assert text.splitlines()[2][warn.column - 1 : warn.end_column - 1] == "unused"
    findings = compile_findings(path, text, AnalysisConfig())
    assert {(f.code, f.line, f.severity.value) for f in findings} >= {("CL801", 4, "error"), ("CL802", 3, "warning")}


def test_error_in_an_included_header_points_at_the_header(tmp_path):
    write(tmp_path, "helpers.cuh", """
        #pragma once
        __device__ inline float helper(float x) { return x + not_declared; }
        """)
    path, text = write(tmp_path, "main.cu", """
        #include "helpers.cuh"
        __global__ void k(float* p) { p[0] = helper(p[0]); }
        """)
    result = compile_cuda(path, text)
    [msg] = [m for m in result.messages if m.severity == "error"]
    assert Path(msg.path) == (tmp_path / "helpers.cuh").resolve()
    assert msg.line == 2 and "not_declared" in msg.message
    [finding] = [f for f in compile_findings(path, text) if f.code == "CL801"]
    assert Path(finding.path).name == "helpers.cuh"


def test_a_macro_expansion_error_marks_the_whole_line(tmp_path):
    path, text = write(tmp_path, "m.cu", """
        #define SQR(x) ((x) * (y))
        __global__ void k(float* p) { p[0] = SQR(2.0f); }
        """)
    [msg] = compile_cuda(path, text).messages
    assert msg.line == 2 and msg.column == 1 and msg.end_column == len(text.splitlines()[1]) + 1


RESOURCES = """
    __global__ void tiled(float* out, const float* a, int n) {
        __shared__ float tile[256];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        tile[threadIdx.x] = a[i];
        __syncthreads();
        if (i < n) out[i] = tile[255 - threadIdx.x];
    }
    template <typename T>
    __global__ void fill(T* p) { p[threadIdx.x] = T(1); }
    template __global__ void fill<double>(double*);

    __global__ void __launch_bounds__(1024, 2) heavy(float* out, const float* a, int n) {
        float acc[64];
        for (int k = 0; k < 64; ++k) acc[k] = a[k * n + threadIdx.x];
        float s = 0;
        for (int k = 0; k < 64; ++k) s += acc[(k * 7 + n) & 63] * acc[k];
        out[threadIdx.x] = s;
    }
    """


def test_resource_usage_per_kernel_with_demangled_names_and_sites(tmp_path):
    path, text = write(tmp_path, "r.cu", RESOURCES)
    result = compile_cuda(path, text, CompileOptions(arch="sm_90"))
    assert result.status == "ok", result.messages
    [tiled] = result.kernel("tiled")
    assert tiled.name == "tiled(float*, float const*, int)"
    assert tiled.shared_static_bytes == 1024 and tiled.barriers == 1 and tiled.registers > 0
    assert tiled.arch == "sm_90" and not tiled.spills
    [fill] = result.kernel("fill")
    assert fill.name == "void fill<double>(double*)"
    assert result.site_of(fill).line == 9
    [heavy] = result.kernel("heavy")
    assert heavy.spills and heavy.registers <= 32 and heavy.stack_frame_bytes > 0
    site = result.site_of(heavy)
    assert text.splitlines()[site.line - 1][site.column - 1 : site.end_column - 1] == "heavy"


def test_maxrregcount_forces_spills_and_cl803_names_the_kernel(tmp_path):
    path, text = write(tmp_path, "r.cu", RESOURCES)
    squeezed = compile_cuda(path, text, CompileOptions(extra_flags=("-maxrregcount=24",)))
    assert any(k.spills for k in squeezed.kernel("heavy"))
    findings = [f for f in compile_findings(path, text) if f.code == "CL803"]
    assert [f.kernel for f in findings] == ["heavy"]
    assert findings[0].line == 12 and findings[0].evidence_dict()["spill_stores_bytes"] > 0


def test_second_compile_is_a_cache_hit_and_a_header_change_is_not(tmp_path):
    write(tmp_path, "h.cuh", "#define SCALE 2.0f\n")
    path, text = write(tmp_path, "c.cu", '#include "h.cuh"\n__global__ void k(float* p) { p[0] *= SCALE; }\n')
    first = compile_cuda(path, text)
    again = compile_cuda(path, text)
    assert (first.cached, again.cached) == (False, True)
    assert again.kernels == first.kernels and again.cubin and Path(again.cubin).is_file()
    write(tmp_path, "h.cuh", "#define SCALE 3.0f\n")
    assert compile_cuda(path, text).cached is False
    assert compile_cuda(path, text + "\n").cached is False


def test_a_ptxas_error_is_placed_on_its_kernel(tmp_path):
    path, text = write(tmp_path, "big.cu", """
        __global__ void big(float* o) {
            __shared__ float s[20000];
            s[threadIdx.x] = 1; __syncthreads(); o[threadIdx.x] = s[threadIdx.x + 1];
        }
        """)
    [msg] = [m for m in compile_cuda(path, text).messages if m.severity == "error"]
    assert msg.tool == "ptxas" and "too much shared data" in msg.message
    assert (msg.line, msg.column) == (1, 17)


def test_torch_extension_source_compiles_without_the_torch_headers(tmp_path):
    path, text = write(tmp_path, "ext.cu", """
        #include <torch/extension.h>
        __global__ void scale_kernel(const float* a, float* out, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) out[i] = a[i] * 2.0f;
        }
        torch::Tensor scale(torch::Tensor a) {
            auto out = torch::empty_like(a);
            scale_kernel<<<(a.numel() + 255) / 256, 256>>>(a.data_ptr<float>(), out.data_ptr<float>(), a.numel());
            return out;
        }
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale", &scale); }
        """)
    result = compile_cuda(path, text)
    assert result.status == "ok" and not result.used_torch_headers
    assert [k.short_name for k in result.kernels] == ["scale_kernel"]


def test_no_nvcc_is_a_skip_with_a_reason(tmp_path):
    path, text = write(tmp_path, "k.cu", "__global__ void k() {}\n")
    result = compile_cuda(path, text, CompileOptions(nvcc=str(tmp_path / "no-nvcc")))
    assert result.status == "skipped" and "nvcc was not found" in result.reason


def test_cl804_when_registers_limit_occupancy_for_the_known_block_size(tmp_path):
    path, text = write(tmp_path, "o.cu", """
        __global__ void heavy(float* out, const float* a, int n) {
            float acc[64];
            for (int k = 0; k < 64; ++k) acc[k] = a[k * n + threadIdx.x];
            float s = 0;
            for (int k = 0; k < 64; ++k) s += acc[(k * 7 + n) & 63] * acc[k];
            out[threadIdx.x] = s;
        }
        void launch(float* out, const float* a, int n) { heavy<<<n / 256, 256>>>(out, a, n); }
        """)
    result = compile_cuda(path, text, CompileOptions(arch="sm_90"))
    [k] = result.kernels
    assert k.registers > 64
    findings = findings_from_results(path, [result], {"heavy": LaunchShape(256, 0)}, AnalysisConfig())
    [cl804] = [f for f in findings if f.code == "CL804"]
    assert cl804.line == 1 and cl804.kernel == "heavy"
    ev = cl804.evidence_dict()
    assert ev["limiter"] == "registers" and ev["occupancy"] < 0.5 and ev["block_threads"] == 256
    assert "at most 64 would allow 50%" in cl804.message
    # the analyzer finds the block size at the launch site on its own
    assert [f.code for f in compile_report(path, text).findings if f.code == "CL804"] == ["CL804"]
    # no known launch shape for the kernel: no CL804
    light = findings_from_results(path, [result], {"other": LaunchShape(256, 0)}, AnalysisConfig())
    assert all(f.code != "CL804" for f in light)


KERNELBENCH = '''
import torch
from torch.utils.cpp_extension import load_inline

cuda_source = """
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int unused;
    if (i < n) y[i] = fmaxf(x[i], 0.0f) + oops;
}

torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

cpp_source = "torch::Tensor relu(torch::Tensor x);"

relu = load_inline(name="relu", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["relu"])
'''


def test_embedded_load_inline_errors_map_to_python_lines(tmp_path):
    path, text = write(tmp_path, "model_new.py", KERNELBENCH)
    result = compile_python(path, text)
    assert len(result.parts) == 1
    errors = [m for m in result.messages if m.severity == "error"]
    [err] = errors
    lines = text.splitlines()
    assert err.path == path and lines[err.line - 1].strip().startswith("if (i < n) y[i] = fmaxf")
    assert lines[err.line - 1][err.column - 1 : err.end_column - 1] == "oops"
    [warn] = [m for m in result.messages if m.severity == "warning"]
    assert lines[warn.line - 1][warn.column - 1 : warn.end_column - 1] == "unused"
    findings = compile_findings(path, text)
    assert {(f.code, f.line) for f in findings} == {("CL801", err.line), ("CL802", warn.line)}


def test_embedded_kernel_resources_and_site(tmp_path):
    fixed = KERNELBENCH.replace(" + oops", "").replace("    int unused;\n", "")
    path, text = write(tmp_path, "model_new.py", fixed)
    result = compile_python(path, text)
    assert result.ok
    [kernel] = result.kernels
    assert kernel.short_name == "relu_kernel"
    site = result.parts[0].result.site_of(kernel)
    assert text.splitlines()[site.line - 1][site.column - 1 : site.end_column - 1] == "relu_kernel"


def test_cupy_raw_kernel_is_compiled_without_torch_defines(tmp_path):
    path, text = write(tmp_path, "cupy_kernel.py", '''
        import cupy as cp

        add = cp.RawKernel(r"""
        extern "C" __global__ void add_one(float* x, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            __half h = __float2half(1.0f);
            if (i < n) x[i] += __half2float(h + h);
        }
        """, "add_one")
        ''')
    text = text.replace('extern "C"', '#include <cuda_fp16.h>\nextern "C"', 1)
    result = compile_python(path, text)
    assert result.ok, result.messages  # half operators exist: the load_inline defines are not applied
    [kernel] = result.kernels
    assert kernel.mangled == "add_one" and kernel.short_name == "add_one"
    site = result.parts[0].result.site_of(kernel)
    assert text.splitlines()[site.line - 1][site.column - 1 : site.end_column - 1] == "add_one"


async def test_cancelling_an_async_compile_kills_nvcc_and_its_children(tmp_path, gone):
    import asyncio
    import stat

    from cudalens.profiler.compile_findings import compile_report_async

    # A stand-in compiler driver that hangs like a slow cicc would; the test is about process handling.
    pid_file = tmp_path / "child.pid"
    slow = tmp_path / "slow-nvcc"
    slow.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "slow nvcc 0.0"; exit 0; fi\n'
        f"sleep 300 & echo $! > {pid_file}\nwait\n"
    )
    slow.chmod(slow.stat().st_mode | stat.S_IEXEC)
    path, text = write(tmp_path, "k.cu", "__global__ void k(float* p) { p[0] = 1.f; }\n")
    task = asyncio.create_task(compile_report_async(path, text, options=CompileOptions(nvcc=str(slow))))
    for _ in range(400):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    child = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone(child), "the compiler's child process survived the cancel"


def test_a_header_compiles_on_its_own_without_pragma_once_noise(tmp_path):
    path, text = write(tmp_path, "ops.cuh", """
        #pragma once
        __device__ inline float twice(float x) { return x * 2.0f; }
        __global__ void apply(float* p) { p[threadIdx.x] = twice(p[threadIdx.x]); }
        """)
    result = compile_cuda(path, text)
    assert result.status == "ok" and result.messages == ()
    assert [k.short_name for k in result.kernels] == ["apply"]


def test_device_code_using_torch_types_is_built_with_the_torch_headers(tmp_path):
    pytest.importorskip("torch")
    path, text = write(tmp_path, "half_model.py", '''
        from torch.utils.cpp_extension import load_inline

        cuda_source = """
        __global__ void scale_half(c10::Half* x, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] = x[i] * c10::Half(2.0f) + oops;
        }
        torch::Tensor scale(torch::Tensor x) {
            scale_half<<<(x.numel() + 255) / 256, 256>>>(reinterpret_cast<c10::Half*>(x.data_ptr()), x.numel());
            return x;
        }
        """
        mod = load_inline(name="h", cpp_sources="torch::Tensor scale(torch::Tensor x);",
                          cuda_sources=cuda_source, functions=["scale"])
        ''')
    result = compile_python(path, text)
    [part] = result.parts
    assert part.result.used_torch_headers
    # only the user's error: the torch headers' own warnings are not shown
    [msg] = result.messages
    assert msg.path == path and text.splitlines()[msg.line - 1][msg.column - 1 : msg.end_column - 1] == "oops"
