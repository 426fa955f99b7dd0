"""Reading the workspace: which source files a check looks at and how their bytes become text
(files.py), the `[tool.cudalens]` table of the nearest pyproject.toml (config.py), `#include`d headers
read from disk (includes.py), and the project's `.cudalens/` folder that cudalens writes into (state.py).
analysis/ takes text and an include reader; the I/O it needs is here.
"""
