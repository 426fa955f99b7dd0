"""The text parsers on nvcc's, gcc's and ptxas's own words (captured from nvcc 13.0), and the host-code blanker."""

from __future__ import annotations

import textwrap

from cudalens.profiler.build_cache import BuildCache, cache_key
from cudalens.profiler.device_only import device_only
from cudalens.profiler.nvcc_diagnostics import parse_nvcc_output
from cudalens.profiler.ptxas import kernel_base_name, parse_resource_usage

SOURCE = {
    "t.cu": [
        "template <typename T>",
        "__global__ void tk(T* p) { p[threadIdx.x] = T(1) + bad<T>; }",
        "#error custom failure",
    ]
}


def line_of(path: str, line: int) -> str | None:
    lines = SOURCE.get(path)
    return lines[line - 1] if lines and 0 < line <= len(lines) else None


def test_front_end_message_with_instantiation_note_and_caret():
    out = textwrap.dedent("""\
        t.cu(2): error: identifier "bad" is undefined
          __attribute__((global)) void tk(T* p) { p[threadIdx.x] = T(1) + bad<T>; }
                                                                          ^
                  detected during instantiation of "void tk(T *) [with T=float]" at line 9

        1 error detected in the compilation of "t.cu".
        """)
    [msg] = parse_nvcc_output(out, line_of)
    assert (msg.path, msg.line, msg.severity) == ("t.cu", 2, "error")
    assert SOURCE["t.cu"][1][msg.column - 1 : msg.end_column - 1] == "bad"
    assert "detected during instantiation" in msg.message


def test_host_preprocessor_and_tool_messages():
    out = textwrap.dedent("""\
        t.cu:3:2: error: #error custom failure
            3 | #error custom failure
              |  ^~~~~
        nvcc fatal   : Unsupported gpu architecture 'sm_70'
        ptxas warning : For profile sm_90 adjusting per thread register count of 16 to lower bound of 24
        ptxas info    : 0 bytes gmem
        """)
    first, fatal, warning = parse_nvcc_output(out, line_of)
    assert (first.path, first.line, first.column, first.end_column) == ("t.cu", 3, 2, 7)
    assert first.tool == "host" and first.message == "#error custom failure"
    assert fatal.path is None and fatal.severity == "error" and "Unsupported gpu architecture" in fatal.message
    assert warning.severity == "warning" and warning.tool == "ptxas"


def test_ptxas_report_ignores_device_function_blocks():
    out = textwrap.dedent("""\
        ptxas info    : 0 bytes gmem
        ptxas info    : Function properties for _Z6helperf
            16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
        ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'
        ptxas info    : Function properties for _Z1kPf
            8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
        ptxas info    : Function properties for _Z6helperf
            16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
        ptxas info    : Used 30 registers, used 1 barriers, 2048 bytes smem, 360 bytes cmem[0], 8 bytes cmem[2]
        """)
    [k] = parse_resource_usage(out)
    assert (k.mangled, k.arch, k.registers, k.barriers) == ("_Z1kPf", "sm_80", 30, 1)
    assert (k.shared_static_bytes, k.constant_bytes, k.stack_frame_bytes) == (2048, 368, 8)
    assert not k.spills


def test_kernel_base_names():
    assert kernel_base_name("void ns::tk<float, 4>(float*)") == "tk"
    assert kernel_base_name("add(float*, float const*, int)") == "add"


def test_device_only_keeps_kernels_and_positions():
    src = textwrap.dedent("""\
        #include <torch/extension.h>
        #define CHECK(x) TORCH_CHECK(x.is_cuda(), "needs CUDA")
        namespace {
        __global__ void k(float* p) { p[threadIdx.x] = 0.f; }  // "}" {
        }
        torch::Tensor run(torch::Tensor x) { const char* s = "}{"; k<<<1, 32>>>(x.data_ptr<float>()); return x; }
        struct Holder { at::Tensor t; };
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run); }
        """)
    out = device_only(src)
    assert out.stripped and not out.needs_torch
    assert len(out.text) == len(src) and out.text.count("\n") == src.count("\n")
    kept = out.text.splitlines()
    assert kept[3] == src.splitlines()[3] and kept[1] == src.splitlines()[1]
    assert kept[0].strip() == kept[5].strip() == kept[6].strip() == kept[7].strip() == ""


def test_device_code_that_uses_torch_needs_the_headers():
    assert device_only("__device__ c10::Half h(c10::Half x) { return x; }\n").needs_torch
    assert not device_only("__global__ void k(float* p) {}\n").stripped


def test_build_cache_round_trip_and_damaged_entry(tmp_path):
    cache = BuildCache(tmp_path)
    key = cache_key("a", "bc")
    assert key != cache_key("ab", "c")
    assert cache.get(key) is None
    cache.put(key, {"x": 1})
    assert cache.get(key) == {"x": 1}
    (cache.entry_dir(key) / "result.json").write_text("{not json")
    assert cache.get(key) is None and not cache.entry_dir(key).exists()


def test_display_name_keeps_template_arguments():
    from cudalens.profiler.ptxas import KernelResources

    assert KernelResources("void ns::f<c<int>, 4>(int*)", "_Z", "sm_90", 8).display_name == "f<c<int>, 4>"
    assert KernelResources("add(float*)", "_Z3addPf", "sm_90", 8).display_name == "add"


def test_kernel_summary_line():
    from cudalens.profiler.compile_findings import LaunchShape, resources_summary
    from cudalens.profiler.ptxas import KernelResources

    k = KernelResources("k(float*)", "_Z1kPf", "sm_90", 72, shared_static_bytes=1024, spill_stores_bytes=8,
                        spill_loads_bytes=8)
    assert resources_summary(k) == "72 regs · 1 KB smem · spills 8/8 B on sm_90"
    assert resources_summary(k, LaunchShape(256, 0)) == (
        "72 regs · 1 KB smem · spills 8/8 B · 38% occupancy at 256 threads (registers) on sm_90"
    )
