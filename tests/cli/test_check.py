"""`cudalens check`: exit codes, outputs, configuration and robustness, through the real entry point."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cudalens.analysis.config import AnalysisConfig, config_from_mapping
from cudalens.cli.check_config import ConfigResolver, Overrides
from cudalens.cli.check_run import run_checks
from cudalens.cli.profiler_hooks import load_hooks
from cudalens.workspace.config import load_config


def one_line(text: str) -> bool:
    return len(text.strip().splitlines()) == 1 and "Traceback" not in text


# --- exit codes and usage errors ---------------------------------------------------------------------------


def test_a_clean_kernel_passes(tmp_path, cli, kernel):
    kernel("clean_saxpy.cu").copy_to(tmp_path)
    result = cli("check", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (0, "All checks passed!\n", "")


def test_no_source_files_is_a_warning_not_an_error(tmp_path, cli):
    (tmp_path / "notes.txt").write_text("nothing\n")
    result = cli("check", ".", cwd=tmp_path)
    assert result.code == 0 and "no .cu, .cuh or .py files" in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "missing.cu"], "missing.cu: no such file or folder"),
        (["check", "--format", "xml"], "invalid choice: 'xml'"),
        (["check", "--select", "E501"], "not a rule code or prefix: E501"),
        (["check", "--fail-level", "loud"], "invalid choice: 'loud'"),
        (["check", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["check", "--config", "absent.toml"], "cannot read config file absent.toml"),
        (["rule", "CL999"], "unknown rule 'CL999'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path, cli, args, message):
    result = cli(*args, cwd=tmp_path)
    assert result.code == 2
    assert message in result.err and one_line(result.err), result.err
    assert result.out == ""


def test_a_config_file_that_is_not_toml_is_a_usage_error(tmp_path, cli):
    (tmp_path / "bad.toml").write_text("select = [\n")
    result = cli("check", "--config", "bad.toml", cwd=tmp_path)
    assert result.code == 2 and "is not valid TOML" in result.err and one_line(result.err)


def test_findings_exit_1_and_exit_zero_exits_0(tmp_path, cli, kernel):
    source = kernel("transpose_naive.cu")
    source.copy_to(tmp_path)
    assert cli("check", cwd=tmp_path).code == 1
    assert cli("check", "--exit-zero", cwd=tmp_path).code == 0
    assert cli("check", "--fail-level", "error", cwd=tmp_path).code == 0


# --- robustness ---------------------------------------------------------------------------------------------

NASTY = {
    "empty.cu": b"",
    "garbage.cu": bytes(range(256)) * 40,
    "latin1.cu": "__global__ void k(float* a) { a[threadIdx.x] = 1.0f; } // café\n".encode("latin-1"),
    "unbalanced.cu": b"__global__ void k(float* a) { if (threadIdx.x) { a[0] = 1;\n",
    "truncated.cuh": b"template <int N> __global__ void k(float* a) { a[threadIdx.x * N",
    "nul.py": b"x = '\x00'\n__global__ = 1\n",
}


def test_nasty_files_never_produce_a_traceback(tmp_path, console):
    for name, data in NASTY.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "dir.cu").mkdir()
    result = console("check", ".", cwd=tmp_path)
    assert result.code in (0, 1), result.err
    assert "Traceback" not in result.err + result.out
    assert "error:" not in result.err


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc (a file no one can read)")
def test_an_unreadable_file_is_one_error_line_and_only_all_failing_exits_2(tmp_path, cli, kernel):
    (tmp_path / "unreadable.cu").symlink_to("/proc/self/mem")  # reading it fails with EIO, even as root
    alone = cli("check", cwd=tmp_path)
    assert (alone.code, alone.out) == (2, "")
    assert alone.err == "cudalens: error: unreadable.cu: Input/output error\n"
    kernel("clean_saxpy.cu").copy_to(tmp_path)
    with_good = cli("check", cwd=tmp_path)
    assert (with_good.code, with_good.out) == (0, "All checks passed!\n")
    assert with_good.err == alone.err


def test_a_file_that_vanishes_during_the_run_is_one_error_line_and_the_rest_are_checked(
    tmp_path, kernel, capsys
):
    good = kernel("clean_saxpy.cu").copy_to(tmp_path)
    resolver = ConfigResolver(Overrides(), None, tmp_path)
    outcome = run_checks([tmp_path / "vanished.cu", good], resolver, load_hooks(False, False), tmp_path)
    assert (outcome.checked, outcome.errors) == (1, 1)
    err = capsys.readouterr().err
    assert "vanished.cu" in err and one_line(err)


def test_console_script_help_and_version(tmp_path, console):
    assert console("--version", cwd=tmp_path).out.startswith("cudalens ")
    result = console("check", "--help", cwd=tmp_path)
    assert result.code == 0 and "--format" in result.out


def test_progress_stays_off_when_stderr_is_not_a_terminal(tmp_path, console, kernel):
    for i in range(3):
        kernel("clean_saxpy.cu").copy_to(tmp_path, f"k{i}.cu")
    result = console("check", cwd=tmp_path)
    assert result.err == "" and "\r" not in result.out


# --- output formats on real analyzer output ----------------------------------------------------------------


def test_json_output_has_the_versioned_shape(tmp_path, cli, kernel):
    kernel("clean_saxpy.cu").copy_to(tmp_path)
    data = json.loads(cli("check", "--format", "json", cwd=tmp_path).out)
    assert data == {"version": 1, "findings": []}


def test_text_output_lists_findings_at_their_lines(tmp_path, cli, kernel):
    names = ("transpose_naive.cu", "row_sums_bank_conflict.cu", "strided_scale.cu")
    for name in names:
        kernel(name).copy_to(tmp_path)
    result = cli("check", cwd=tmp_path)
    for name in names:
        for line, code in kernel(name).expected:
            assert any(
                row.startswith(f"{name}:{line}:") and f": {code} " in row for row in result.out.splitlines()
            ), result.out
    rows = [row for row in result.out.splitlines() if re.match(r"^\S+:\d+:\d+: CL\d{3} ", row)]
    assert f"\nFound {len(rows)} finding{'s' if len(rows) != 1 else ''}.\n" in result.out


def test_json_findings_from_a_python_file_point_into_the_python_file(tmp_path, cli, kernel):
    source = kernel("inline_transpose.py")
    source.copy_to(tmp_path)
    data = json.loads(cli("check", "--format", "json", cwd=tmp_path).out)
    assert {(f["path"], f["line"], f["code"]) for f in data["findings"]} >= {
        ("inline_transpose.py", line, code) for line, code in source.expected
    }


def test_python_files_without_cuda_are_skipped(tmp_path, cli, kernel):
    kernel("plain_python.py").copy_to(tmp_path)
    result = cli("check", "--format", "json", cwd=tmp_path)
    assert result.code == 0 and json.loads(result.out)["findings"] == []


def test_statistics_count_per_rule(tmp_path, cli, kernel):
    kernel("strided_scale.cu").copy_to(tmp_path)
    kernel("strided_scale.cu").copy_to(tmp_path, "again.cu")
    rows = json.loads(cli("check", "--statistics", "--format", "json", cwd=tmp_path).out)
    assert {"code": "CL101", "count": 2} in [{"code": r["code"], "count": r["count"]} for r in rows]


def test_output_file_receives_the_report(tmp_path, cli, kernel):
    kernel("clean_saxpy.cu").copy_to(tmp_path)
    result = cli("check", "--format", "json", "--output-file", "report.json", cwd=tmp_path)
    assert result.out == "" and json.loads((tmp_path / "report.json").read_text())["version"] == 1


def test_output_file_in_a_missing_folder_is_a_usage_error(tmp_path, cli, kernel):
    kernel("clean_saxpy.cu").copy_to(tmp_path)
    result = cli("check", "--output-file", "no/such/dir/r.txt", cwd=tmp_path)
    assert result.code == 2 and one_line(result.err)


# --- selection and configuration -----------------------------------------------------------------------------


def selected(config: AnalysisConfig, codes=("CL101", "CL102", "CL201", "CL301", "CL302")) -> list[str]:
    return [c for c in codes if config.enabled(c)]


def test_command_line_select_starts_a_new_selection():
    config = AnalysisConfig(select=("CL1", "CL3"), ignore=("CL301",))
    assert selected(Overrides(select=("CL3",)).apply(config)) == ["CL301", "CL302"]
    assert selected(Overrides(select=("CL3",), ignore=("CL302",)).apply(config)) == ["CL301"]


def test_command_line_ignore_adds_to_the_configured_one():
    config = AnalysisConfig(ignore=("CL301",))
    assert selected(Overrides(ignore=("CL1",)).apply(config)) == ["CL201", "CL302"]


def test_the_more_specific_of_select_and_ignore_wins():
    assert selected(Overrides(select=("CL301",), ignore=("CL3",)).apply(AnalysisConfig())) == ["CL301"]
    assert selected(Overrides(select=("CL3",), ignore=("CL301",)).apply(AnalysisConfig())) == ["CL302"]


def test_extend_select_adds_to_the_selection():
    config = AnalysisConfig(select=("CL1",))
    assert selected(Overrides(extend_select=("CL302",)).apply(config)) == ["CL101", "CL102", "CL302"]


def write_pyproject(folder: Path, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(f"[project]\nname = 'demo'\n\n[tool.cudalens]\n{body}\n")


def test_settings_come_from_the_nearest_pyproject(tmp_path):
    write_pyproject(tmp_path, 'select = ["CL1"]\nexclude = ["generated"]')
    write_pyproject(tmp_path / "sub", 'ignore = ["CL2"]\nfail-level = "error"')
    resolver = ConfigResolver(Overrides(), None, tmp_path)
    top = resolver.config_for(tmp_path / "a.cu")
    sub = resolver.config_for(tmp_path / "sub" / "deep" / "b.cu")
    assert (top.select, top.fail_level) == (("CL1",), "warning")
    assert (sub.select, sub.ignore, sub.fail_level) == ((), ("CL2",), "error")
    assert resolver.excluded(tmp_path / "generated" / "x.cu")
    assert not resolver.excluded(tmp_path / "sub" / "generated" / "x.cu")


def test_command_line_overrides_the_pyproject(tmp_path):
    write_pyproject(tmp_path, 'select = ["CL1"]\nfail-level = "error"')
    resolver = ConfigResolver(Overrides(select=("CL3",), fail_level="info"), None, tmp_path)
    config = resolver.config_for(tmp_path / "a.cu")
    assert (config.select, config.fail_level) == (("CL3",), "info")


def test_bad_settings_stop_the_check_with_a_line_each(tmp_path, cli, kernel):
    write_pyproject(tmp_path, 'fail-level = 3\nselect = ["E501"]\ncolour = "always"')
    for i in range(3):
        kernel("clean_saxpy.cu").copy_to(tmp_path, f"k{i}.cu")
    result = cli("check", cwd=tmp_path)
    assert result.code == 2 and result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 3, result.err  # once each, not once per file
    assert all(line.startswith(f"cudalens: error: {tmp_path / 'pyproject.toml'}: ") for line in lines)
    assert any("'fail-level' must be a str" in line for line in lines)
    assert any("'E501'" in line for line in lines)
    assert any("unknown setting 'colour'" in line for line in lines)


def test_a_config_file_given_on_the_command_line(tmp_path, kernel):
    (tmp_path / "cudalens.toml").write_text('ignore = ["CL3"]\n')
    write_pyproject(tmp_path, 'ignore = ["CL1"]')
    resolver = ConfigResolver(Overrides(), tmp_path / "cudalens.toml", tmp_path)
    assert resolver.config_for(tmp_path / "a.cu").ignore == ("CL3",)


def test_ignoring_a_rule_from_the_command_line_drops_its_findings(tmp_path, cli, kernel):
    kernel("strided_scale.cu").copy_to(tmp_path)
    write_pyproject(tmp_path, 'select = ["CL3"]')
    assert "CL101" not in cli("check", cwd=tmp_path).out
    assert "CL101" in cli("check", "--select", "CL1", cwd=tmp_path).out
    assert "CL101" not in cli("check", "--select", "CL1", "--ignore", "CL101", cwd=tmp_path).out


def test_excluded_files_are_not_checked_even_when_named(tmp_path, cli, kernel):
    kernel("strided_scale.cu").copy_to(tmp_path)
    assert cli("check", "strided_scale.cu", cwd=tmp_path).code == 1
    write_pyproject(tmp_path, 'exclude = ["strided_*"]')
    assert cli("check", "strided_scale.cu", cwd=tmp_path).code == 0


# --- GPU checks glue ----------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_compile_reports_nvcc_errors_as_findings(tmp_path, cli):
    (tmp_path / "broken.cu").write_text("__global__ void k(float* a) {\n    a[threadIdx.x] = 1.0f\n}\n")
    assert cli("check", cwd=tmp_path).code == 0
    result = cli("check", "--compile", cwd=tmp_path)
    assert result.code == 1
    assert any(line.startswith("broken.cu:") and ": CL801 " in line for line in result.out.splitlines()), (
        result.out
    )


def test_a_suppression_naming_no_code_is_warned_about(tmp_path, cli, kernel):
    source = kernel("clean_saxpy.cu").copy_to(tmp_path)
    source.write_text(source.read_text().replace("if (i < n) {", "if (i < n) {  // cudalens: ignore[CL1O1]"))
    result = cli("check", cwd=tmp_path)
    assert result.code == 0
    assert result.err == "clean_saxpy.cu:4: cudalens: warning: 'CL1O1' in a suppression is not a rule code\n"


def test_the_readme_quick_start_command_on_the_examples(console):
    repo = Path(__file__).resolve().parents[2]
    if not (repo / "examples").is_dir():
        pytest.skip("no examples/ in this checkout yet")
    result = console("check", "examples/", cwd=repo)
    assert result.code in (0, 1), result.err
    assert "Traceback" not in result.err and "error:" not in result.err


def test_parallel_checking_reports_the_same_as_serial(tmp_path, cli, kernel):
    for name in ("transpose_naive.cu", "row_sums_bank_conflict.cu", "inline_transpose.py", "clean_saxpy.cu"):
        kernel(name).copy_to(tmp_path)
    (tmp_path / "garbage.cu").write_bytes(bytes(range(256)))
    serial = cli("check", "--jobs", "1", "--format", "json", cwd=tmp_path)
    parallel = cli("check", "--jobs", "2", "--format", "json", cwd=tmp_path)
    # on a 1-core machine --jobs 2 is capped, and says so: that note is the only difference allowed
    err = "".join(line for line in parallel.err.splitlines(True) if "CPU cores here" not in line)
    assert (parallel.code, parallel.out, err) == (serial.code, serial.out, serial.err)


def test_standard_input_is_checked_under_the_name_given(tmp_path, console, kernel):
    source = kernel("strided_scale.cu")
    plain = console("check", "-", cwd=tmp_path, stdin=source.text)
    named = console("check", "--stdin-filename", "kernels/t.cu", "-", cwd=tmp_path, stdin=source.text)
    ((line, code),) = source.expected
    assert plain.code == named.code == 1
    assert plain.out.startswith(f"stdin.cu:{line}:") and f": {code} " in plain.out
    assert named.out == plain.out.replace("stdin.cu", "kernels/t.cu")
    python = console("check", "--stdin-filename", "m.py", "-", cwd=tmp_path, stdin="print('no cuda here')\n")
    assert (python.code, python.out) == (0, "All checks passed!\n")


def test_standard_input_can_be_diffed_but_not_rewritten(tmp_path, console, kernel):
    source = kernel("row_sums_bank_conflict.cu")
    diff = console("check", "--diff", "-", cwd=tmp_path, stdin=source.text)
    assert diff.code == 1 and "+    __shared__ float tile[32][33];" in diff.out
    refused = console("check", "--fix", "-", cwd=tmp_path, stdin=source.text)
    assert (
        refused.code == 2
        and refused.err == "cudalens: error: --fix cannot rewrite standard input; use --diff\n"
    )


def test_include_dirs_are_relative_to_the_pyproject(tmp_path, cli, kernel):
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "params.cuh").write_text("#define STRIDE 4\n")
    (tmp_path / "src").mkdir()
    text = kernel("strided_scale.cu").text.replace("in[i * 4]", "in[i * STRIDE]")
    (tmp_path / "src" / "k.cu").write_text('#include "params.cuh"\n' + text)
    assert cli("check", cwd=tmp_path / "src").code == 0  # STRIDE unknown: nothing proven
    write_pyproject(tmp_path, 'include-dirs = ["include"]')
    from_src = cli("check", cwd=tmp_path / "src")
    assert from_src.code == 1 and from_src.out.startswith("k.cu:6:") and " CL101 " in from_src.out
    assert cli("check", cwd=tmp_path).out.startswith("src/k.cu:6:")


@pytest.mark.parametrize("key", ["fail-level", "fail_level", "min-severity", "min_severity"])
def test_both_spellings_of_a_key_are_validated_alike(key):
    result = config_from_mapping({key: "fatal"})
    assert result.config == AnalysisConfig()
    assert result.errors == [f"setting '{key}' must be one of error, warning, info, hint, not 'fatal'"]


def test_include_dirs_are_made_absolute_against_the_pyproject_for_every_caller(tmp_path):
    # the server compiles on save with this config, in a temporary folder: a relative folder would be lost
    write_pyproject(tmp_path, 'include-dirs = ["include", "/opt/cutlass/include"]')
    (tmp_path / "src").mkdir()
    config = load_config(tmp_path / "src").config
    assert config.include_dirs == (str(tmp_path / "include"), "/opt/cutlass/include")


def test_a_broken_pyproject_on_the_way_up_is_an_error_not_skipped(tmp_path):
    write_pyproject(tmp_path, 'ignore = ["CL1"]')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("[tool.cudalens\n")
    result = load_config(tmp_path / "sub")
    assert result.source == tmp_path / "sub" / "pyproject.toml"
    assert len(result.errors) == 1 and "is not valid TOML" in result.errors[0]
