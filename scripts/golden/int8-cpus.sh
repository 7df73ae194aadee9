#!/usr/bin/env bash
# Worst cosine of the int8 model to the sentence-transformers golden vectors on each x86-64
# code path ONNX Runtime picks its int8 kernels for: this host, then index/embed's test
# binary under qemu-x86_64 -cpu EPYC-Milan and Haswell (AVX2 without VNNI), Nehalem
# (SSE4.2) and qemu64 (baseline x86-64). qemu's TCG has no AVX-512, so the VNNI path is the
# host's only where /proc/cpuinfo lists avx512_vnni (the first line says). Emulation is
# slow: about 20 s per CPU for the 20 golden texts.
#
# usage: scripts/golden/int8-cpus.sh [CPU...]
#   CTXD_MODEL_DIR   fp32 model directory whose "-int8" sibling is measured
#                    (default .cache/models/all-MiniLM-L6-v2, from make setup-run)
#   CTXD_ORT_LIB     libonnxruntime.so (default .cache/onnxruntime/libonnxruntime.so)
set -euo pipefail

cd "$(dirname "$0")/../.."
command -v qemu-x86_64 >/dev/null || { echo "int8-cpus: qemu-x86_64 not found: apt-get install -y qemu-user" >&2; exit 1; }
export CTXD_MODEL_DIR=${CTXD_MODEL_DIR:-$PWD/.cache/models/all-MiniLM-L6-v2}
export CTXD_ORT_LIB=${CTXD_ORT_LIB:-$PWD/.cache/onnxruntime/libonnxruntime.so}
cpus=("$@")
[[ ${#cpus[@]} -gt 0 ]] || cpus=(EPYC-Milan Haswell Nehalem qemu64)

work=$(mktemp -d "${TMPDIR:-/tmp}/ctxd-int8-cpus.XXXXXX")
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/embed.test" ./index/embed

# worst RUNNER...: runs TestModel_Golden's int8 case and prints its minimum cosine.
worst() {
	local out
	out=$(cd index/embed && "$@" "$work/embed.test" -test.run 'TestModel_Golden$/int8' -test.v 2>/dev/null) || {
		echo "$out" >&2
		return 1
	}
	sed -n 's/.*minimum cosine \([0-9.]*\).*/\1/p' <<<"$out"
}

vnni=$(grep -qw avx512_vnni /proc/cpuinfo && echo "AVX-512 VNNI" || echo "no AVX-512 VNNI")
echo "model: ${CTXD_MODEL_DIR%/}-int8"
printf '%-20s %s\n' "host ($vnni)" "$(worst env)"
for cpu in "${cpus[@]}"; do
	printf '%-20s %s\n' "$cpu" "$(worst qemu-x86_64 -cpu "$cpu")"
done
