#!/usr/bin/env bash
# Ray 2.60 for the GPU machine's python 3.12, small enough to carry: its wheel is 79 MB, over the 64 MiB one device
# call carries, and that machine cannot download. Made here from PyPI: the wheel and the four packages of
# jsonschema's that the machine lacks, unpacked, less what evaluations as Ray tasks never load (the Java jars, the
# dashboard's web client and source maps, RLlib, Tune, Serve, Train, Data, LLM), packed as .ray/ray-slim-py312.tar.xz
# (about 21 MB; git ignores .ray). The `ray-search` stage of gpu_session.sh unpacks it onto PYTHONPATH.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP=${PIP:-.venv/bin/pip}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PIP" download -q --no-deps --python-version 3.12 --only-binary :all: --platform manylinux2014_x86_64 -d "$tmp" \
  "ray==2.60.0" jsonschema jsonschema-specifications referencing rpds-py
mkdir "$tmp/site"
for wheel in "$tmp"/*.whl; do unzip -q -o "$wheel" -d "$tmp/site"; done  # unzip keeps the binaries executable
rm -rf "$tmp"/site/ray/{jars,rllib,tune,serve,train,llm,data} "$tmp/site/ray/dashboard/client/build"
find "$tmp/site" -name '*.map' -delete
mkdir -p .ray
tar -C "$tmp/site" -cf - . | xz -9 -T0 > .ray/ray-slim-py312.tar.xz
ls -l .ray/ray-slim-py312.tar.xz
