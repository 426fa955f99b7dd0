"""Kernels swapped back into the CI model: a candidate beside its problem is tested, registered as a
torch.library custom op and swapped in for exactly the arguments it was verified on; the whole model's outputs
stay equal, eager and traced by torch.compile. The candidate is real code: group_norm written out in plain
torch, standing in for a CUDA kernel on a machine without a GPU."""

from __future__ import annotations

import contextlib
import html
import importlib.util
import io
import re
import shutil
import sys
from pathlib import Path

import pytest

from cudalens.cli.main import main
from cudalens.model import integration
from cudalens.model.integration import candidates
from cudalens.model.profile import profile_model
from cudalens.model.verify import load_result, render

GROUP_NORM = '''

class ModelNew(nn.Module):
    """group_norm over (batch, group) rows in plain torch: the stand-in for a CUDA kernel."""

    def forward(self, input, weight, bias):
        n, c = input.shape[:2]
        rows = input.reshape(n, 8, -1)
        var, mean = torch.var_mean(rows, dim=-1, keepdim=True, correction=0)
        normed = ((rows - mean) * torch.rsqrt(var + 1e-05)).reshape(n, c, -1)
        return (normed * weight.view(1, c, 1) + bias.view(1, c, 1)).reshape(input.shape)
'''
SLOW = '''

class ModelNew(nn.Module):
    """group_norm, correct, and twenty times over: slower than what it replaces, in any mode."""

    def forward(self, input, weight, bias):
        for _ in range(20):
            out = torch.nn.functional.group_norm(input, 8, weight=weight, bias=bias, eps=1e-05)
        return out
'''
WRONG = '''

class ModelNew(nn.Module):
    def forward(self, q, k, v):
        return q * 2  # not attention
'''


@pytest.fixture(scope="module")
def folder(model_file):
    out = model_file.parent / "integrated"
    profile = profile_model(str(model_file), device="cpu", out_dir=str(out), problems=0,
                            names=("group_norm", "scaled_dot_product_attention"), iters=1, warmup=1)
    written = {Path(p).name.rsplit("_", 1)[0]: Path(p) for p in profile.problems}
    assert {"group_norm", "scaled_dot_product_attention"} <= set(written), [(c.name, c.share, c.advice) for c in profile.calls]
    norm, attention = written["group_norm"], written["scaled_dot_product_attention"]
    norm.with_suffix(".optimized.py").write_text(norm.read_text() + SLOW)
    attention.with_suffix(".optimized.py").write_text(attention.read_text() + WRONG)
    return out


@pytest.fixture(scope="module")
def integrated(folder, model_file) -> tuple[int, str, str]:
    """`cudalens model --integrate` run once on `folder`: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["model", str(model_file), "--integrate", "--out", str(folder), "--device", "cpu",
                     "--allow-torch-ops", "--no-compile"])
    return code, out.getvalue(), err.getvalue()


def test_cli_never_swaps_a_slower_kernel_and_says_why(folder, integrated):
    code, out, err = integrated
    assert code == 0, err
    assert "group_norm_" in out and "accepted" in out
    assert "scaled_dot_product_attention_" in out and "not used" in out
    assert "  the op alone: kernel " in out and " ms, eager " in out
    assert re.search(r"  eager: 0\.\d\d× vs eager group_norm: not swapped \(slower\)", out), out
    assert "whole-model outputs, eager: equal within tolerance" in out
    assert re.search(r"eager +\d+\.\d{3} ms +\(unchanged\) +1\.00× +none", out), out
    assert "torch.compile" not in out  # --no-compile: one mode, one decision
    assert (folder / "cudalens_kernels.py").is_file() and (folder / "cudalens_op_calls.py").is_file()
    assert out.rstrip().endswith(f"the page: cudalens report {folder}")


def test_the_result_kept_beside_the_problems_is_what_was_printed(folder, model_file, integrated):
    # the integration.json the report reads back is the same Integration: rendered again, the same text
    _, out, _ = integrated
    model, result = load_result(folder)
    assert model == str(model_file.resolve())
    assert render(result) + f"\nthe page: cudalens report {folder}\n" == out


def test_the_report_page_of_a_whole_model(folder, integrated, capsys):
    assert main(["report", str(folder)]) == 0
    page_path = Path(capsys.readouterr().out.strip())
    assert page_path == (folder / "report.html").resolve()
    page = page_path.read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", " ", html.unescape(page))
    assert "Whole model: " in text and "roofline" not in page.lower()  # no kernel of its own to place
    for anchor in ("whole-model", "kernels", "time"):  # "calls" only where a kernel was swapped
        assert f'id="{anchor}"' in page
    assert re.search(r"eager\s+\d+\.\d{3} ms\s+\(unchanged\)\s+1\.00×\s+none", text), text
    assert re.search(r"0\.\d\d× vs eager group_norm: not swapped \(slower\)", text)
    assert "outputs, eager: equal within tolerance" in text
    assert "not used" not in text and "scaled_dot_product_attention" in text  # the failed one: its test's message
    assert "Content-Security-Policy" in page and "<script" not in page


def test_a_folder_with_a_broken_result_is_one_line(tmp_path, capsys):
    (tmp_path / "integration.json").write_text("{not json")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an integration result" in err


def _import(path: Path, name: str = "cudalens_kernels_under_test"):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def kernels(folder, tmp_path_factory):
    """The integration module for the plain-torch group_norm, swapped in both modes (what the decision gives a
    kernel that beats the op in both): the swap's mechanics, whatever this machine's timings say."""
    out = tmp_path_factory.mktemp("swapped")
    norm = next(p for p in folder.glob("group_norm_*.py") if not p.name.endswith(".optimized.py"))
    problem = out / norm.name
    problem.write_text(norm.read_text())
    shutil.copy(norm.with_suffix(".pt"), out)
    candidate = problem.with_suffix(".optimized.py")
    candidate.write_text(norm.read_text() + GROUP_NORM)
    (accepted,) = candidates(out)
    path = integration.write(out, [accepted], "block.py", {accepted.name: ("eager", "compiled")})
    return _import(path)


def _model(model_file):
    import torch

    torch.manual_seed(0)
    return _import(model_file, "block_under_test").model_and_inputs()  # torch.compile needs a real module


def test_swapped_model_equals_the_original_and_other_shapes_fall_back(kernels, model_file):
    import torch

    model, (x,) = _model(model_file)
    model.eval()
    (kernel,) = [k for k in kernels.KERNELS if k.spec["name"].startswith("kgroup_norm_")]
    namespace = getattr(torch.ops, kernel.spec["namespace"])
    assert hasattr(namespace, kernel.spec["name"])  # registered as a torch.library custom op
    fast = kernels.swap(model)
    with torch.no_grad():
        hits = kernel.hits
        torch.testing.assert_close(fast(x), model(x), rtol=1e-4, atol=1e-4)
        assert kernel.hits == hits + 1
        bigger = torch.randn(3, 16, 16, 16)  # a batch the kernel was not verified on: the original runs
        fallbacks = kernel.fallbacks
        assert torch.equal(fast(bigger), model(bigger))
        assert kernel.fallbacks == fallbacks + 1 and kernel.hits == hits + 1


def test_the_graph_pass_puts_the_custom_op_into_dynamos_graph(kernels, model_file):
    import torch

    model, (x,) = _model(model_file)
    model.eval()
    traced: list[str] = []

    def backend(graph, example_inputs):  # what Inductor does with its pre-grad pass, then no compiler
        kernels.GRAPH_PASS(graph.graph)
        graph.recompile()
        traced.extend(str(node.target) for node in graph.graph.nodes)
        return graph.forward

    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend)
    bigger = torch.randn(3, 16, 16, 16)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        assert [t for t in traced if "kgroup_norm_" in t], traced
        assert not any("group_norm" in t and "kgroup_norm_" not in t for t in traced), traced
        traced.clear()
        torch.testing.assert_close(compiled(bigger), model(bigger), rtol=1e-4, atol=1e-4)  # another shape: recompiled
    assert any("function group_norm" in t for t in traced) and not any("kgroup_norm_" in t for t in traced), traced
    torch._dynamo.reset()


def test_the_custom_op_passes_opcheck(kernels, model_file):
    import torch

    (kernel,) = kernels.KERNELS
    model, (x,) = _model(model_file)
    norm = model.norm
    h = model.conv(x).detach()
    torch.library.opcheck(kernel.op, (h, norm.weight.detach(), norm.bias.detach()))


def test_swapped_model_compiled_by_itself_runs_no_kernel(kernels, model_file):
    import torch

    model, (x,) = _model(model_file)
    model.eval()
    traced: list[str] = []

    def backend(graph, example_inputs):
        traced.extend(str(node.target) for node in graph.graph.nodes)
        return graph.forward

    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(kernels.swap(model), backend=backend)(x)
    assert traced and not any("kgroup_norm_" in t for t in traced), traced  # compiled(): the kernels' way in
    torch._dynamo.reset()


def test_compiled_runs_the_kernel_inside_inductors_graph(kernels, model_file):
    import torch

    model, (x,) = _model(model_file)
    model.eval()
    torch._dynamo.reset()
    replaced = kernels.GRAPH_PASS.replaced
    with torch.no_grad():
        torch.testing.assert_close(kernels.compiled(model)(x), model(x), rtol=1e-4, atol=1e-4)
    assert kernels.GRAPH_PASS.replaced == replaced + 1
    torch._dynamo.reset()


def test_the_candidates_are_paired_by_name(folder):
    found = candidates(folder)
    assert [a.candidate.name.removesuffix(".optimized.py") for a in found] == [a.problem.stem for a in found]
    assert {a.call["function"] for a in found} == {"torch.nn.functional.group_norm",
                                                   "torch.nn.functional.scaled_dot_product_attention"}


def test_integrate_without_candidates_is_one_line(tmp_path, model_file, capsys):
    code = main(["model", str(model_file), "--integrate", "--out", str(tmp_path), "--device", "cpu"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no candidate beside a problem" in err[0]


def test_optimize_runs_the_loop_with_a_replayed_coder_then_integrates(folder, model_file, tmp_path, capsys,
                                                                       monkeypatch):
    from tests.agents.fake_openai import FakeOpenAI, reply
    from tests.agents.kernelbench_cpu import fenced

    # the same call gets the same file name in `out`
    norm = next(p for p in folder.glob("group_norm_*.py") if not p.name.endswith(".optimized.py"))
    monkeypatch.setenv("MODEL_TEST_KEY", "sk-model-SECRET-1234")
    monkeypatch.chdir(tmp_path)  # the loop's run log goes to .cudalens/runs here
    out = tmp_path / "optimized"
    with FakeOpenAI([reply(fenced(norm.read_text() + GROUP_NORM))]) as fake:
        code = main(["model", str(model_file), "--device", "cpu", "--problems", "0", "--problem", "group_norm",
                     "--out", str(out), "--optimize", "1", "--rounds", "1", "--base-url", fake.base_url,
                     "--api-key-env", "MODEL_TEST_KEY", "--allow-torch-ops", "--no-compile", "--iters", "1",
                     "--coder-model", "stub-7"])
        assert len(fake.requests) == 1 and "torch.nn.functional.group_norm" in fake.requests[0].prompt
        assert fake.requests[0].body["model"] == "stub-7"  # passed on under the name optimize gives it
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert (out / norm.name.replace(".py", ".optimized.py")).is_file()
    assert "whole-model outputs, eager: equal within tolerance" in captured.out
    assert "sk-model-SECRET-1234" not in captured.out + captured.err


def test_the_verify_job_runs_each_mode_with_its_own_kernels(kernels, model_file):
    # the job `--integrate` runs, on a module whose kernel is swapped in both modes: eager through the mode,
    # compiled through the graph pass (one node replaced), each compared with its own original and timed
    from cudalens.model.verify import Integration, KernelUse, render
    from cudalens.worker.child.results import Measurement, OutputCheck

    d = verify_job(kernels, model_file)
    assert d["passed"] and d["compiled_passed"] and d["replaced"] == 1, d
    assert [k[1] for k in d["kernels"]] == [1]
    assert all(d["timings"][mode]["after"] is not None for mode in ("eager", "compiled"))
    assert list(d["seconds"]) == ["building the model", "comparing the outputs", "compiling both models",
                                  "timing the model, eager", "timing the model, compiled",
                                  "timing the model through the swap's checks alone"], d["seconds"]
    result = Integration(
        Path(kernels.__file__), (), tuple(OutputCheck.from_json(c) for c in d["checks"]),
        tuple(OutputCheck.from_json(c) for c in d["compiled_checks"]), tuple(KernelUse(*k) for k in d["kernels"]),
        {m: (Measurement.from_json(t["before"]), Measurement.from_json(t["after"])) for m, t in d["timings"].items()},
        Measurement.from_json(d["mode_only"]), d["replaced"])
    text = render(result)
    assert "whole-model outputs, torch.compile: equal within tolerance" in text
    assert "  torch.compile: 1 call(s) of the compiled graph replaced by a kernel" in text


def verify_job(kernels, model_file: Path) -> dict:
    """The job `--integrate` runs on an integration module, on the CPU, both modes, a short budget: its result."""
    from cudalens.worker.run_job import run_job

    payload = {"path": str(model_file), "entry": None, "device": "cpu", "integration": kernels.__file__,
               "compile": True, "budget_ms": 20}
    outcome = run_job("model_verify", payload, timeout_s=300, cwd=str(model_file.parent))
    assert outcome.status == "ok", outcome.error
    return outcome.payload
