"""Maps the repository's top-level folders to subpackages of `cudalens`.

Each part lives in its own folder (`analysis/`, `server/`, ...) but installs as `cudalens.<part>`, so nothing
generic such as `analysis` or `server` lands at the top level of a user's site-packages.
"""

import os

from setuptools import setup

PARTS = ("analysis", "workspace", "profiler", "worker", "model", "agents", "server", "cli")


def _packages() -> list[str]:
    """Every folder of a part that holds Python or package data (`analysis/queries/`: tree-sitter queries), so
    that setuptools ships the data without warning that a data folder is not a package."""
    found = ["cudalens"]
    for part in PARTS:
        for root, dirs, files in os.walk(part):
            dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
            if "__init__.py" in files or any(f.endswith(".scm") for f in files):
                found.append("cudalens." + root.replace(os.sep, "."))
    return found


setup(
    packages=_packages(),
    package_dir={"cudalens": "cudalens", **{f"cudalens.{p}": p for p in PARTS}},
)
