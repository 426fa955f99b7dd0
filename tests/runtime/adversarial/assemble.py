"""Assembles the adversarial corpus's cases: each Coder reply, as submitted, from its case file and a shared base.

A case file (`cheat_*.py`, `honest_*.py`, listed in manifest.json) holds the reply's docstring, `BASE`, the name
of a file in bases/ holding the body it shares with other cases, and `EDITS`, what turns that body into its own:
(first, last, new) triples, in order, each replacing the body's lines first..last (numbered from 1, as the base
holds them; last = first - 1 inserts before line first) by the text new. The reply is the docstring's lines
followed by the edited body. A base is a body as it stands, or, where it sets BASE and EDITS too, another base's
body edited (its own docstring is not part of it). Nothing here runs a case: files are read with `ast`.

`python tests/runtime/adversarial/assemble.py DIR` writes every case, assembled, into DIR for a reader.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parent


class CaseError(ValueError):
    """A case file that does not assemble; the message is one line naming the file."""


def cases(corpus: Path = CORPUS) -> list[dict]:
    """The manifest's entries."""
    return json.loads((corpus / "manifest.json").read_text())


def _constant(tree: ast.Module, name: str, path: Path):
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            try:
                return ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError) as e:
                raise CaseError(f"{path.name}: {name} is not a literal ({e})") from None
    raise CaseError(f"{path.name}: no {name} = ...")


def _edited(path: Path, tree: ast.Module, bases: Path, depth: int) -> str:
    """The body that `path`'s BASE holds, with `path`'s EDITS applied."""
    base_name, edits = _constant(tree, "BASE", path), _constant(tree, "EDITS", path)
    if not isinstance(base_name, str) or not base_name.isidentifier() or not (bases / f"{base_name}.py").is_file():
        raise CaseError(f"{path.name}: no base {base_name!r} in {bases.name}/")
    if depth > 8:
        raise CaseError(f"{path.name}: bases derived more than 8 deep (a cycle?)")
    lines = base_body(base_name, bases.parent, depth + 1).splitlines(keepends=True)
    after = len(lines)  # edits come in order, none overlapping: each ends above where the next starts
    for number, edit in reversed(list(enumerate(edits, 1))):
        if not (isinstance(edit, tuple) and len(edit) == 3 and isinstance(edit[0], int) and isinstance(edit[1], int)
                and isinstance(edit[2], str) and (edit[2] == "" or edit[2].endswith("\n"))):
            raise CaseError(f"{path.name}: edit {number} is not (first line, last line, new lines)")
        first, last, new = edit
        if not 1 <= first <= last + 1 <= after + 1:
            raise CaseError(f"{path.name}: edit {number}'s lines {first}-{last} are not in order within "
                            f"{base_name}'s {len(lines)} lines")
        lines[first - 1:last] = new.splitlines(keepends=True)
        after = first - 1
    return "".join(lines)


def _parsed(path: Path) -> tuple[str, ast.Module]:
    try:
        text = path.read_text()
        return text, ast.parse(text, filename=path.name)
    except OSError as e:
        raise CaseError(f"{path.name}: {e.strerror}") from None
    except SyntaxError as e:
        raise CaseError(f"{path.name}: line {e.lineno}: {e.msg}") from None


def base_body(name: str, corpus: Path = CORPUS, depth: int = 0) -> str:
    """The body bases/`name`.py holds: its text, or, where it sets EDITS, the body of its own BASE edited."""
    path = corpus / "bases" / f"{name}.py"
    text, tree = _parsed(path)
    derived = any(isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["EDITS"]
                  for n in tree.body)
    return _edited(path, tree, path.parent, depth) if derived else text


def assemble(file: str, corpus: Path = CORPUS) -> str:
    """The text of the case `file` (a manifest entry's "file") as the Coder submitted it."""
    path = corpus / file
    text, tree = _parsed(path)
    doc = tree.body[0] if tree.body else None
    if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)):
        raise CaseError(f"{file}: no docstring")
    return "".join(text.splitlines(keepends=True)[:doc.end_lineno]) + _edited(path, tree, corpus / "bases", 0)


def write_all(dest: Path) -> list[Path]:
    """Every case of the manifest, assembled, written into `dest` under its own name."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for case in cases():
        target = dest / case["file"]
        target.write_text(assemble(case["file"]))
        out.append(target)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: assemble.py DIR  (writes every case of the adversarial corpus, assembled, into DIR)",
              file=sys.stderr)
        return 2
    try:
        written = write_all(Path(argv[0]))
    except (CaseError, OSError) as e:
        print(f"assemble.py: {e}", file=sys.stderr)
        return 1
    print(f"{len(written)} cases written to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
