"""The split that makes load_inline builds fast: which sources it takes, which it declines and why, and that both
halves compile with the real compilers (nvcc for the device unit, g++ over torch's headers for the glue)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cudalens.worker.child.lib import fast_inline as fast
from cudalens.worker.child.lib import split_source as split

RELU = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#define THREADS 256
struct Pair { float a, b; };
constexpr int UNROLL = 4;

__device__ __forceinline__ float relu(float v) { return v > 0.f ? v : 0.f; }
__host__ __device__ inline int cdiv(int a, int b) { return (a + b - 1) / b; }

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = relu(x[i]);
}

template <int BLOCK>
__global__ void scale_kernel(float* y, int n, float s) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] *= s;
}

torch::Tensor run(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");  // a { brace } in a comment and "in a string {"
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<cdiv(n, THREADS), THREADS>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    scale_kernel<THREADS><<<(n + THREADS - 1) / THREADS, THREADS, 0, 0>>>(y.data_ptr<float>(), n, 1.0f);
    return y;
}
"""


def test_kernels_go_to_the_device_unit_and_launches_become_launcher_calls():
    units = split.split_cuda(RELU, "cuda.cu", 3)
    assert units.launchers == 2
    assert "__global__ void relu_kernel" in units.device and "__global__" not in units.glue
    assert "torch" not in units.device.replace("#include <torch", "")
    assert "<<<" not in units.glue and "cudalens_launch_relu_kernel_0(dim3(cdiv(n, THREADS))" in units.glue
    assert "scale_kernel<THREADS><<<cudalens_grid" in units.device
    assert "struct Pair" in units.device and "struct Pair" in units.glue  # types serve both sides
    assert "inline int cdiv" in units.device and "inline int cdiv" in units.glue  # so do host-device helpers
    assert "float relu(" not in units.glue
    # every item keeps its line in load_inline's cuda.cu (3 implicit header lines first)
    assert '#line 14 "cuda.cu"\n__global__ void relu_kernel' in units.device
    assert '#line 25 "cuda.cu"\ntorch::Tensor run' in units.glue


def test_a_launch_clang_format_spaced_out_is_split_like_any_other():
    # `<< <grid, block>> >(`: clang-format's spelling when it is not configured for CUDA; the split declined it
    # ("host code names relu_kernel outside a <<<…>>> launch")
    spaced = RELU.replace("<<<", "<< <").replace(">>>", ">> >")
    assert "<< <" in spaced
    units = split.split_cuda(spaced, "cuda.cu", 3)
    assert units.launchers == 2 and "cudalens_launch_relu_kernel_0(dim3(cdiv(n, THREADS))" in units.glue
    assert '#line 25 "cuda.cu"\ntorch::Tensor run' in units.glue  # the same lines


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("namespace k { __global__ void f(float* x) {} }", "namespace"),
        ("#ifdef FAST\n#define N 4\n#endif\n__global__ void f(float* x) {}", "#if"),
        ("__global__ void f(at::Half* x) {}", "torch types"),
        ("__constant__ float w[4];\nvoid set(torch::Tensor t) { cudaMemcpyToSymbol(w, t.data_ptr<float>(), 16); }", "w"),
        ("__global__ void f(float* x) {}\nvoid g(torch::Tensor t) { cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 0); }", "f"),
        (
            "template <typename T> __global__ void f(T* x) {}\n"
            "void g(torch::Tensor t) { AT_DISPATCH_FLOATING_TYPES(t.scalar_type(), \"g\", [&] { f<scalar_t><<<1, 1>>>(t.data_ptr<scalar_t>()); }); }",
            "scalar_t",
        ),
        ("void g(torch::Tensor t) { other<<<1, 1>>>(t.data_ptr<float>()); }", "other"),
    ],
)
def test_what_it_cannot_carry_over_it_declines_with_a_reason(source, reason):
    with pytest.raises(split.Unsplittable, match=reason):
        split.split_cuda(source, "cuda.cu")


def test_bindings_in_the_cuda_source_move_to_the_bindings_unit():
    source = RELU + '\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run); }\n'
    units = split.split_cuda(source, "cuda.cu")
    assert units.bindings and "PYBIND11_MODULE" not in units.glue
    assert "torch::Tensor run(torch::Tensor x);" in units.glue_prototypes


def test_fast_load_inline_declines_what_load_inline_would_build_differently():
    def load_inline(name, cpp_sources, cuda_sources=None, functions=None, build_directory=None, is_python_module=True):
        raise AssertionError("never called: the fast path only reads the signature")

    with pytest.raises(fast.Declined, match="cuda_sources"):
        fast.fast_load_inline(load_inline, "x", "int f();", None)
    with pytest.raises(fast.Declined, match="build_directory"):
        fast.fast_load_inline(load_inline, "x", "", RELU, build_directory="/tmp/x")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_both_halves_compile_with_the_real_compilers(tmp_path):
    """nvcc builds the device unit without a torch header; g++ builds the glue over the lite header alone."""
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    sources = fast.split_sources(
        {"name": "relu", "cpp_sources": "torch::Tensor run(torch::Tensor x);", "cuda_sources": RELU, "functions": ["run"]}
    )
    cuda_path = tmp_path / "cuda.cu"
    cuda_path.write_text(sources.cuda)
    kernels = tmp_path / "kernels.cu"
    kernels.write_text(sources.device.replace("CUDA_SOURCE_PATH", str(cuda_path)))
    nvcc = subprocess.run(["nvcc", "-c", str(kernels), "-o", str(tmp_path / "k.o"), "-arch=sm_90", "-std=c++17"],
                          capture_output=True, text=True)
    assert nvcc.returncode == 0, nvcc.stderr
    (tmp_path / "lite.h").write_text(fast._LITE_HEADER)
    glue = tmp_path / "glue.cpp"
    glue.write_text(f'#include "{tmp_path / "lite.h"}"\n' + sources.glue.replace("CUDA_SOURCE_PATH", str(cuda_path)))
    includes = [f"-I{p}" for p in cpp_extension.include_paths()] + [f"-I{_cuda_include()}"]
    gxx = subprocess.run(["g++", "-fsyntax-only", "-std=c++17", *includes, str(glue)], capture_output=True, text=True)
    assert gxx.returncode == 0, gxx.stderr[-3000:]
    assert "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {" in sources.bindings


def _cuda_include() -> str:
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda",
             str(Path(os.path.realpath(shutil.which("nvcc") or "/")).parents[1])]
    for home in filter(None, homes):
        if (Path(home) / "include" / "cuda_runtime.h").exists():
            return str(Path(home) / "include")
    pytest.skip("no CUDA toolkit headers found next to nvcc")


def test_the_glue_keeps_the_host_optimization_nvcc_would_have_used_and_the_bindings_load_inlines():
    flags = fast.build_flags({"extra_cuda_cflags": ["-O3"], "extra_cflags": None})
    assert flags["extra_cuda_cflags"] == ["-O3", "-lineinfo"] and flags["extra_cflags"] == []  # main.cpp's
    assert fast.glue_flags(flags)["extra_cflags"] == ["-O3"] and flags["extra_cflags"] == []
    assert fast.glue_flags(fast.build_flags({"extra_cuda_cflags": ["-O3"], "extra_cflags": ["-O1"]}))["extra_cflags"] == ["-O1"]
    assert fast.glue_flags(fast.build_flags({}))["extra_cflags"] == []  # nvcc's default host level is g++'s too


def test_old_candidates_are_pruned_least_recently_used_first(tmp_path):
    import os
    import time

    for i in range(5):
        (tmp_path / f"c{i}").mkdir()
        os.utime(tmp_path / f"c{i}", (time.time() - 100 + i, time.time() - 100 + i))
    os.utime(tmp_path / "c0")  # used just now
    fast._prune(tmp_path, keep=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c0", "c3", "c4"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_first_build_precompiles_the_header_beside_its_compiles(tmp_path, monkeypatch):
    """The glue's include path is there at once; the `.gch` appears whole when the thread ends; a later build
    finds it and starts no thread. (CPU torch has no CUDA_HOME of its own: the toolkit beside nvcc is named.)"""
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", str(Path(_cuda_include()).parent))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")  # no GPU to ask
    build = tmp_path / "fast_builds" / "relu_x"
    build.mkdir(parents=True)
    flags = fast.build_flags({})
    header, thread = fast._precompiled_header("relu_x", build, flags)
    assert thread is not None and header.name == "cudalens_torch_lite.h" and header.read_text() == fast._LITE_HEADER
    other = tmp_path / "fast_builds" / "warmup"  # another build of the same flags meanwhile: no second thread
    other.mkdir()
    assert fast._precompiled_header("warmup", other, flags) == (header, None)
    assert fast._PRECOMPILING[header.parent] is thread
    thread.join()
    assert (header.parent / "cudalens_torch_lite.h.gch").is_file(), (header.parent / "failed.txt").read_text()
    assert not list(header.parent.glob("*.gch.*"))  # no partial file left
    again, none = fast._precompiled_header("relu_x", build, flags)
    assert again == header and none is None


def test_an_edit_of_device_code_leaves_the_glue_as_it_was():
    """The glue names the build's copy of cuda.cu, not the candidate's: ninja does not compile it again."""
    def glue(cuda: str) -> str:
        sources = fast.split_sources({"name": "relu", "cpp_sources": "torch::Tensor run(torch::Tensor x);",
                                      "cuda_sources": cuda, "functions": ["run"]})
        return fast.glue_text(sources, Path("/pch/lite.h"), Path("/build/cuda.cu"))

    edited = RELU.replace("__global__", "/* edited */ __global__", 1)
    assert edited != RELU and glue(edited) == glue(RELU)
    assert "/build/cuda.cu" in glue(RELU)


def test_builds_of_one_set_of_declarations_take_different_lanes_and_a_lone_build_lane_0(tmp_path):
    """Candidates sharing their bindings build at once, each in a lane of its own; a file saved again and again
    always finds lane 0 free, where its unchanged glue object is."""
    with fast._free_lane(tmp_path) as first, fast._free_lane(tmp_path) as second:
        assert (first.name, second.name) == ("lane0", "lane1")
    with fast._free_lane(tmp_path) as again:
        assert again.name == "lane0"


def test_declarations_only_cpp_sources_get_the_light_bindings():
    def light(cpp: str):
        return fast.split_sources({"name": "relu", "cpp_sources": cpp, "cuda_sources": RELU,
                                   "functions": ["run"]}).light_bindings

    assert "torch/extension.h" not in light("torch::Tensor run(torch::Tensor x);  // { not code }")
    mine = light('#include <torch/extension.h>\n#pragma once\nstd::vector<at::Tensor> run(torch::Tensor x, int64_t n);')
    assert mine and "torch/extension.h" not in mine and "std::vector<at::Tensor> run(" in mine
    assert light("torch::Tensor run(torch::Tensor x) { return x; }") is None  # a body may use all of torch
    assert light("#define N 4\ntorch::Tensor run(torch::Tensor x);") is None
    assert light("torch::Tensor run(torch::Tensor x, std::vector<int64_t> d = {});") is None


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_light_bindings_compile_with_torchs_own_flags(tmp_path, monkeypatch):
    """The light main.cpp (the Tensor class and torch's pybind casters, not torch/extension.h) compiles with
    the flags torch's ninja writer gives main.cpp, `wrap_pybind_function` and the types of a prototype an LLM
    may write all. (CPU torch: compile only.)"""
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", str(Path(_cuda_include()).parent))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    cpp = ("#include <vector>\nstd::vector<torch::Tensor> run(torch::Tensor x, c10::optional<torch::Tensor> b, "
           "int64_t n, double s, bool f, torch::Scalar a, at::ScalarType t, std::optional<int64_t> k, "
           "at::IntArrayRef shape, std::tuple<torch::Tensor, torch::Tensor> p, torch::Dtype d, py::object o);")
    sources = fast.split_sources({"name": "relu", "cpp_sources": cpp, "cuda_sources": RELU, "functions": ["run"]})
    (tmp_path / "main.cpp").write_text(sources.light_bindings)
    fast._compile_objects(tmp_path, "cudalens_ext_test", ["main.cpp"], fast.build_flags({}))
    assert (tmp_path / "main.o").stat().st_size > 0


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_light_bindings_that_do_not_compile_give_way_to_torch_extension_h(tmp_path, monkeypatch):
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", str(Path(_cuda_include()).parent))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    sources = fast.split_sources({"name": "relu", "cpp_sources": "torch::Tensor run(torch::Tensor x);",
                                  "cuda_sources": RELU, "functions": ["run"]})
    broken = fast.Sources(sources.bindings, sources.cuda, sources.device, sources.glue, "#error not enough")
    folder = tmp_path / "bindings"
    fast._Bindings("cudalens_ext_test", broken, fast.build_flags({}), folder, False).wait()
    assert (folder / "main.o.done").read_text() == "full"
    assert "torch/extension.h" in (folder / "main.cpp").read_text()
    assert any("light bindings of cudalens_ext_test failed" in line for line in fast.LOG)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_build_does_not_wait_for_a_header_another_process_is_precompiling(tmp_path, monkeypatch):
    """A worker's warm-up precompiles the header while a build ahead (another process) runs: that build goes on
    over the plain header and does not wait for the other's precompile to end."""
    import fcntl

    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", str(Path(_cuda_include()).parent))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    started = []
    monkeypatch.setattr(fast, "_precompile", lambda command, shared: started.append(shared))
    build = tmp_path / "fast_builds" / "relu_x"
    build.mkdir(parents=True)
    flags = fast.build_flags({"extra_cuda_cflags": ["-O1"]})
    header, thread = fast._precompiled_header("relu_x", build, flags)
    thread.join()
    with open(header.parent / ".lock", "a") as other:  # another open file: flock's "other process"
        fcntl.flock(other, fcntl.LOCK_EX)
        assert fast._precompiled_header("relu_x", build, flags) == (header, None)
    assert started == [header.parent]  # no second precompile started


def test_the_module_is_named_by_its_bindings_unless_the_sources_name_it():
    def name(ext: str, cpp: str = "torch::Tensor run(torch::Tensor x);") -> str:
        a = {"name": ext, "cpp_sources": cpp, "cuda_sources": RELU, "functions": ["run"]}
        return fast.module_name(a, fast.split_sources(a), fast.build_flags(a))

    assert name("relu_a") == name("relu_b") and name("relu_a").startswith("cudalens_ext_")
    own = "torch::Tensor run(torch::Tensor x);\nTORCH_LIBRARY(TORCH_EXTENSION_NAME, m) { m.def(\"run\", run); }"
    assert name("relu_a", own).startswith("relu_a_") and name("relu_b", own).startswith("relu_b_")


def test_old_sets_of_declarations_are_pruned_but_not_one_another_build_is_using(tmp_path):
    import fcntl
    import os
    import time

    folders = []
    for i in range(5):
        folder = tmp_path / f"cudalens_ext_{i}"
        (folder / "cand").mkdir(parents=True)
        (folder / "lane0").mkdir()
        (folder / "lane0" / ".lock").touch()
        os.utime(folder, (time.time() - 100 + i, time.time() - 100 + i))
        folders.append(folder)
    (tmp_path / "pch").mkdir()  # not a module folder
    with open(folders[0] / "lane0" / ".lock", "a") as held:  # the oldest, but a build holds its lane
        fcntl.flock(held, fcntl.LOCK_EX)
        fast._prune_modules(tmp_path, keep=3, using=folders[4])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cudalens_ext_0", "cudalens_ext_2", "cudalens_ext_3",
                                                          "cudalens_ext_4", "pch"]


LIGHT_GLUE_HOST = r"""
__global__ void fill_kernel(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 1.f; }

std::vector<torch::Tensor> run(torch::Tensor x, torch::Tensor w) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "x must be a float CUDA tensor");
    auto xc = x.contiguous();
    auto out = torch::zeros({xc.size(0), w.size(1)}, xc.options());
    auto more = at::empty({4}, torch::TensorOptions().dtype(torch::kFloat).device(x.device()));
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "run", ([&] { (void)xc.data_ptr<scalar_t>(); }));
    fill_kernel<<<1, 32>>>(out.data_ptr<float>(), (int)out.numel());
    return {out, more, out.view({-1}).to(torch::kHalf), torch::empty_like(x)};
}
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_first_glue_compiles_over_the_operators_it_calls_alone(tmp_path, monkeypatch):
    """Before the header is precompiled, the glue includes the Tensor class and the operators it calls (ATen's
    one header each), not ATen.h, and compiles over them with torch's own flags. (CPU torch: compile only.)"""
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", str(Path(_cuda_include()).parent))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    from cudalens.worker.child.lib import light_glue

    sources = fast.split_sources({"name": "g", "cpp_sources": "std::vector<torch::Tensor> run(torch::Tensor x, "
                                  "torch::Tensor w);", "cuda_sources": LIGHT_GLUE_HOST, "functions": ["run"]})
    prelude = light_glue.prelude(sources.glue, Path(cpp_extension.include_paths()[0]))
    assert [ln for ln in prelude.splitlines() if "ATen/ops/" in ln] == [
        f"#include <ATen/ops/{op}.h>" for op in ("empty", "empty_like", "zeros")]  # not TensorOptions, kFloat
    assert "ATen/ATen.h" not in prelude and "#include <ATen/Dispatch.h>" in prelude
    (tmp_path / "cuda.cu").write_text(sources.cuda)
    (tmp_path / "glue.cpp").write_text(fast.glue_text(sources, tmp_path / "unused.h", tmp_path / "cuda.cu", prelude))
    fast._compile_objects(tmp_path, "cudalens_ext_test", ["glue.cpp"], fast.build_flags({}))
    assert (tmp_path / "glue.o").stat().st_size > 0


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_first_glue_that_needs_more_compiles_again_over_the_whole_header(tmp_path, monkeypatch):
    """Tensor arithmetic needs ATen's operators header (Functions.h): the light glue fails, the build says so
    and compiles the glue again over the lite header; its objects then link. (CPU torch has no libtorch_cuda to
    link against: the link is where the build stops here; on a GPU it goes on.)"""
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", str(Path(_cuda_include()).parent))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    cuda = RELU.replace("    return y;\n", "    return y * 2.0f + x;\n")
    sources = fast.split_sources({"name": "relu", "cpp_sources": "torch::Tensor run(torch::Tensor x);",
                                  "cuda_sources": cuda, "functions": ["run"]})
    lane = tmp_path / "cudalens_ext_x" / "lane0"
    lane.mkdir(parents=True)
    fast.LOG.clear()
    with pytest.raises(RuntimeError, match="Error linking relu_x"):
        fast._build("relu_x", sources, fast.build_flags({}), lane, lane.parent / "cand" / "a", False)
    assert fast.LOG == ["light glue of relu_x failed to compile: the ATen header instead"]
    glue = (lane / "glue.cpp").read_text()
    assert glue.startswith(f'#include "{tmp_path / "pch"}') and "y * 2.0f + x" in glue
    assert (lane / "glue.o").is_file() and (lane / "kernels.cuda.o").is_file()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_every_file_nvccs_dependency_list_names_is_there_so_ninja_keeps_the_kernels(tmp_path, monkeypatch):
    """torch's ninja file has nvcc write the kernels' dependencies (`-MD -MF`, torch with CUDA); a file it names
    that does not exist makes ninja compile the kernels again before every link (the launchers' `#line` name did:
    1.6 s for a 0.3 s link on the H200). Every name in nvcc's list is a file where nvcc ran, the lane."""
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", str(Path(_cuda_include()).parent))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    sources = fast.split_sources({"name": "relu", "cpp_sources": "torch::Tensor run(torch::Tensor x);",
                                  "cuda_sources": RELU, "functions": ["run"]})
    lane = tmp_path / "cudalens_ext_x" / "lane0"
    lane.mkdir(parents=True)
    with pytest.raises(RuntimeError, match="Error linking relu_x"):  # CPU torch: no libtorch_cuda to link
        fast._build("relu_x", sources, fast.build_flags({"extra_cuda_cflags": ["-O3"]}), lane,
                    lane.parent / "cand" / "a", False)
    # (and the glue gets nvcc's host level, the bindings load_inline's main.cpp flags: none)
    cflags = {f.parent.name: re.search(r"^cflags = (.*)$", f.read_text(), re.M).group(1).split()
              for f in (lane / "build.ninja", lane.parent / "bindings" / "build.ninja")}
    assert "-O3" in cflags["lane0"] and "-O3" not in cflags["bindings"]
    run = subprocess.run(["nvcc", "-MD", "-MF", "deps.d", "-arch=sm_90", "-std=c++17", "-c", "kernels.cu", "-o",
                          "k.o"], cwd=lane, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    names = (lane / "deps.d").read_text().replace("\\\n", " ").split(":", 1)[1].split()
    assert split.LAUNCHERS_FILE in names
    assert [n for n in names if not (lane / n).exists()] == []
