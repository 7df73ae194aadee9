#!/usr/bin/env bash
# Writes every generated file (Go, gateway, OpenAPI, TypeScript, Python) under
# the directory given, mirroring the repo layout: "." regenerates in place,
# a temp dir lets `make checkgenerate` compare without touching the tree.
set -euo pipefail
out=${1:?usage: generate.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
.tmp/bin/buf generate -o "$out"
mkdir -p "$out/clients/python/src"
.tmp/venv/bin/python -m grpc_tools.protoc -I proto \
  --python_out="$out/clients/python/src" --pyi_out="$out/clients/python/src" \
  --grpc_python_out="$out/clients/python/src" proto/ctxd/v1/*.proto
