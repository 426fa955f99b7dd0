"""`cudalens check` as a pull request's CI gate: the pull request's files and pyproject.toml are the attacker's.
Nothing in them may silence the check — a configuration cudalens cannot use stops it (exit 2, a line per
problem), a file it could not read is a finding — or inject a GitHub Actions workflow command into the log
(the runner reads commands from stdout and stderr). Each test builds the attacker's repository and runs the
installed `cudalens` console script in a child process, as a CI job does."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cudalens.cli.escape import printable

# Every lane reads every 4th float: CL101 (a warning, so the check fails) on line 4, column 29.
KERNEL = """\
__global__ void strided_scale(const float* in, float* out, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // scale by a
    if (i < n) out[i] = a * in[i * 4];
}
"""
FINDING = ":4:29: CL101 "
CONSOLE_SCRIPT = Path(sys.executable).with_name("cudalens")


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return (self.out + self.err).splitlines()


class Repo:
    """The attacker's repository: a folder the test fills, and `cudalens check` run in it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, name: str, content: str | bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def pyproject(self, body: str) -> None:
        self.write("pyproject.toml", f"[project]\nname = 'pr'\n\n[tool.cudalens]\n{body}\n")

    def check(self, *args: str) -> Run:
        env = {k: v for k, v in os.environ.items() if k != "CUDALENS_DEBUG"}
        proc = subprocess.run([str(CONSOLE_SCRIPT), "check", *args], cwd=self.root, capture_output=True,
                              env=env, timeout=120)
        # strict: output that is not UTF-8 (a file name's raw bytes) is itself a bug
        return Run(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    assert CONSOLE_SCRIPT.is_file(), f"{CONSOLE_SCRIPT}: the console script is not installed (make setup)"
    return Repo(tmp_path)


def stopped_with_one_line(run: Run, *expected: str) -> bool:
    lines = run.err.strip().splitlines()
    return (run.code == 2 and run.out == "" and len(lines) == 1 and lines[0].startswith("cudalens")
            and all(e in lines[0] for e in expected) and "internal error" not in run.err)


# --- the configuration ---------------------------------------------------------------------------------------


def test_a_pyproject_that_is_not_toml_stops_the_check(repo):
    repo.write("k.cu", KERNEL)
    repo.write("pyproject.toml", '[tool.cudalens\nignore = ["CL1"]\n')
    run = repo.check()
    assert stopped_with_one_line(run, "pyproject.toml", "not valid TOML"), run


@pytest.mark.parametrize("body", ['select = ["bogus"]', 'ignore = ["CL999"]', 'extend-select = ["CL99"]'])
def test_a_code_that_is_no_rule_stops_the_check(repo, body):
    repo.write("k.cu", KERNEL)
    repo.pyproject(body)
    run = repo.check()
    assert stopped_with_one_line(run, "not a rule code or prefix"), run


@pytest.mark.parametrize("option", [["--select", "bogus"], ["--select", "CL999"], ["--ignore", "CL05"]])
def test_a_code_on_the_command_line_that_is_no_rule_stops_the_check(repo, option):
    repo.write("k.cu", KERNEL)
    run = repo.check(*option)
    assert stopped_with_one_line(run, "not a rule code or prefix", option[1].upper()), run


@pytest.mark.parametrize(
    ("body", "key"),
    [('fail-level = "fatal"', "'fail-level'"), ('min-severity = "bogus"', "'min-severity'"),
     ('fail_level = "fatal"', "'fail_level'"), ('arch = "sm_90 -Xcompiler -fplugin=x.so"', "'arch'")],
)
def test_a_bad_value_stops_the_check_whichever_spelling_its_key_has(repo, body, key):
    repo.write("k.cu", KERNEL)
    repo.pyproject(body)
    run = repo.check()
    assert stopped_with_one_line(run, key), run


def test_an_unknown_key_stops_the_check(repo):
    repo.write("k.cu", KERNEL)
    repo.pyproject('ignroe = ["CL1"]')  # misspelt: the author meant something that would not happen
    run = repo.check()
    assert stopped_with_one_line(run, "unknown setting 'ignroe'"), run


# --- the files -----------------------------------------------------------------------------------------------


def test_a_nul_byte_in_a_comment_hides_no_finding(repo):
    repo.write("k.cu", KERNEL.replace("// scale by a", "// scale \0 by a").encode())
    run = repo.check()
    assert run.code == 1 and f"k.cu{FINDING}" in run.out, run


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: text.encode("utf-16"),  # with the byte order mark, little-endian here
        lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
        lambda text: text.encode("utf-32"),
        lambda text: codecs.BOM_UTF32_BE + text.encode("utf-32-be"),
    ],
    ids=["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"],
)
def test_a_file_with_a_utf16_or_utf32_byte_order_mark_is_analysed(repo, encode):
    repo.write("k.cu", encode(KERNEL))
    run = repo.check()
    assert run.code == 1 and f"k.cu{FINDING}" in run.out, run


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_a_file_that_is_not_text_fails_the_check_with_a_finding_that_says_so(repo, encoding):
    repo.write("k.cu", KERNEL.encode(encoding))  # no byte order mark: as UTF-8 this is text without kernels
    run = repo.check()
    assert run.code == 1 and "k.cu:1:1: CL001 Not analysed: " in run.out and "NUL" in run.out, run


def test_a_file_above_the_size_limit_is_reported_not_analysed(repo):
    repo.write("big.cu", KERNEL + "// generated\n" * 80_000)  # 1.04 million characters
    run = repo.check()
    assert "big.cu:1:1: CL001 Not analysed: 1.0 million characters" in run.out, run
    assert run.code == 0  # info: a generated file may be that large (--fail-level info makes it fail)
    assert repo.check("--fail-level", "info").code == 1


# --- the log -------------------------------------------------------------------------------------------------

EVIL_NAME = "k\n::error title=pwned::this line is the attacker's\n.cu"


def no_workflow_command(lines: list[str]) -> bool:
    return not any(line.lstrip().startswith("::") for line in lines)


def test_a_file_name_cannot_start_a_line_of_the_text_output(repo):
    repo.write(EVIL_NAME, KERNEL + "// cudalens: ignore[BOGUS]\n")  # also warned about on stderr, by name
    run = repo.check()
    assert run.code == 1, run
    assert no_workflow_command(run.lines), run.lines
    escaped = "k\\n::error title=pwned::this line is the attacker's\\n.cu"
    assert f"{escaped}{FINDING}" in run.out and escaped in run.err


@pytest.mark.parametrize("name", [EVIL_NAME, "k\r::error::carriage return.cu", "k\x1b[2K\x1b[1A.cu"])
def test_no_text_of_the_repository_reaches_the_log_unescaped(repo, name):
    repo.write(name, KERNEL)
    run = repo.check()
    assert run.code == 1 and no_workflow_command(run.lines), run
    assert not any(c in run.out + run.err for c in "\r\x1b"), run  # nor a carriage return nor an escape


def test_github_annotations_keep_the_file_name_in_the_property_escaping(repo):
    repo.write(EVIL_NAME, KERNEL)
    repo.write("plain.cu", KERNEL)
    run = repo.check("--format", "github")
    lines = run.out.splitlines()
    assert run.code == 1 and len(lines) == 2, run  # one command per finding, no line of the attacker's
    assert all(line.startswith("::warning file=") for line in lines)
    # GitHub's own escaping (%, CR, LF; ':' and ',' in properties), which the runner undoes to find the file
    evil = "k%0A%3A%3Aerror title=pwned%3A%3Athis line is the attacker's%0A.cu"
    assert any(line.startswith(f"::warning file={evil},line=4,col=29,") for line in lines), lines


# Sequences the runner's log would act on or show misleadingly if an annotation carried them as they are: an
# escape sequence (a line erased), an OSC 8 hyperlink, a right-to-left override, Unicode's line and paragraph
# separators (a line break to many log viewers).
HOSTILE_NAMES = {
    "CSI": "k\x1b[2K\x1b[1A.cu",
    "OSC 8 link": "k\x1b]8;;https:evil.example\x07click me\x1b]8;;\x07.cu",  # no "/": it would be a folder
    "right-to-left override": "k\u202eexe.cu",
    "line separator": "k\u2028::error::line.cu",
    "paragraph separator": "k\u2029::error::paragraph.cu",
}


def runner_unescaped(value: str) -> str:
    """A workflow command's property as the runner reads it (the inverse of @actions/core's escaping)."""
    for escaped, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(escaped, char)
    return value


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES)
def test_github_annotations_escape_a_file_name_as_the_text_format_does(repo, name):
    repo.write(name, KERNEL)
    as_text, as_github = repo.check(), repo.check("--format", "github")
    assert as_github.code == 1 and not any(c in as_github.out + as_github.err for c in "\x1b\x07\u202e\u2028\u2029")
    [annotation] = as_github.out.splitlines()  # str.splitlines breaks at U+2028 and U+2029 too
    assert annotation.startswith("::warning file=")
    file = runner_unescaped(annotation.removeprefix("::warning file=").split(",line=")[0])
    assert file == as_text.out.split(FINDING)[0] == printable(name)


def test_a_file_name_that_is_not_utf8_is_printed(repo):
    name = os.fsdecode(b"k\xff.cu")  # a Linux name that is not UTF-8: a surrogate in Python's str
    repo.write(name, KERNEL)
    for fmt, expected in (("text", "k\\udcff.cu" + FINDING), ("sarif", "k%FF.cu"), ("json", '"k\\udcff.cu"')):
        run = repo.check("--format", fmt)
        assert run.code == 1 and expected in run.out, (fmt, run)
