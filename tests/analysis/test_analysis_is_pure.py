"""analysis/ is text in, findings out (DESIGN.md): no module under it reads, writes, lists or stats files.
Reading the workspace (source files, pyproject.toml, headers on disk) is workspace/'s; the analyzer gets
header texts through the include reader its caller passes.

An AST check over analysis/**/*.py: a call of one of the file-system functions below, or an import of a TOML
reader, fails unless EXCEPTIONS names the module, the call and why it is not workspace I/O.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANALYSIS = ROOT / "analysis"

# `open(...)` and `io.open(...)`; `os.<name>(...)` / `os.path.<name>(...)`; `<anything>.<name>(...)` (Path's)
BUILTINS = {"open", "io.open"}
OS_CALLS = {"walk", "listdir", "scandir", "stat", "lstat", "remove", "unlink", "rename", "replace", "makedirs",
            "mkdir", "open", "realpath", "exists", "isfile", "isdir", "getsize", "getmtime"}
PATH_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "glob", "rglob", "is_file",
                "is_dir", "exists", "stat", "resolve", "mkdir", "unlink", "touch", "open"}
TOML_MODULES = {"tomllib", "tomli", "toml"}

# (module relative to the repository, the call as the check names it): why it may stay
EXCEPTIONS = {
    ("analysis/ts_binding.py", ".read_text"):
        "the tree-sitter queries (analysis/queries/*.scm) are the package's own data, not the workspace's",
    ("analysis/launch_index.py", "os.path.realpath"):
        "a header's identity: two spellings of one file (a symlink, `../x.cuh`) must be one index entry; it reads "
        "no file's contents, and the paths come from the caller's include reader",
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _io_calls(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] in TOML_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in TOML_MODULES:
            found.append((node.lineno, f"from {node.module} import"))
        elif isinstance(node, ast.Call):
            func = node.func
            name = _dotted(func)
            if name in BUILTINS:
                found.append((node.lineno, name))
            elif name.startswith("os.") and name.rsplit(".", 1)[-1] in OS_CALLS:
                found.append((node.lineno, name))
            elif isinstance(func, ast.Attribute) and func.attr in PATH_METHODS:
                found.append((node.lineno, "." + func.attr))
    return found


def _modules() -> list[Path]:
    return sorted(p for p in ANALYSIS.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_analysis_module_does_file_io() -> None:
    offending = []
    for path in _modules():
        module = path.relative_to(ROOT).as_posix()
        for line, call in _io_calls(ast.parse(path.read_text(encoding="utf-8"))):
            if (module, call) not in EXCEPTIONS:
                offending.append(f"{module}:{line}: {call}")
    assert offending == [], "file I/O in analysis/ (move it to workspace/ or list it in EXCEPTIONS with why)"


def test_every_exception_is_still_needed() -> None:
    used = set()
    for path in _modules():
        module = path.relative_to(ROOT).as_posix()
        used |= {(module, call) for _, call in _io_calls(ast.parse(path.read_text(encoding="utf-8")))}
    assert set(EXCEPTIONS) - used == set(), "no longer called: drop from EXCEPTIONS"


# modules of another folder analysis/ may import: the module, and why it is no way around the layering
ALLOWED_IMPORTS = {
    "cudalens.worker.child.cpp_source":
        "C++ source text read without a parser, standard library only and importing nothing of ours; the worker's "
        "child, which may not import analysis/, reads clang-format's spaced launches with it too: one reading",
}


def _imports(path: Path) -> list[tuple[int, str, int]]:
    """(line, module, level) of each import of a module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, 0) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.lineno, node.module or "", node.level))
    return out


def test_analysis_imports_nothing_else_of_ours() -> None:
    """Nor does it reach the I/O through another part: it imports only itself (DESIGN.md's layering), and the
    modules ALLOWED_IMPORTS names, which import nothing of ours."""
    outside = [f"{path.relative_to(ROOT).as_posix()}:{line}: {name}" for path in _modules()
               for line, name, level in _imports(path) if level == 0 and name.startswith("cudalens.")
               and not name.startswith("cudalens.analysis") and name not in ALLOWED_IMPORTS]
    assert outside == []
    for module in ALLOWED_IMPORTS:
        path = ROOT.joinpath(*module.split(".")[1:]).with_suffix(".py")
        assert [(line, name) for line, name, level in _imports(path) if level or name.startswith("cudalens")] == []


def test_the_check_sees_the_calls_it_names() -> None:
    """The check itself: each kind of call it forbids is found (a check that finds nothing passes silently)."""
    source = (
        "import tomllib\nfrom tomli import loads\nopen('x')\nio.open('x')\nos.walk('.')\nos.path.isfile('x')\n"
        "Path('x').read_text()\np.read_bytes()\n"
    )
    assert [call for _, call in _io_calls(ast.parse(source))] == [
        "import tomllib", "from tomli import", "open", "io.open", "os.walk", "os.path.isfile", ".read_text",
        ".read_bytes",
    ]
