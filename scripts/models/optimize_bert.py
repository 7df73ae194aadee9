#!/usr/bin/env python3
"""Fuse a converted encoder with ONNX Runtime's transformer optimizer.

Each layer's attention becomes one Attention node (Q/K/V projections packed into one
MatMul; the mask is passed as per-row lengths, ReduceSum(attention_mask), which is exact
for right padding, the only padding the Go embedder does: index/embed/pool.go), the
residual Add + LayerNormalization pairs become SkipLayerNormalization and the FFN bias + erf GELU become BiasGelu. These are CPU
kernels ORT does not reach on its own from the plain graph. EmbedLayerNormalization is
not fused: it wants int32 ids and a different position-embedding subgraph, and the
embeddings are a negligible share of the time.

The graph bert_to_onnx.py writes is laid out so the fusions match (mask built as
Unsqueeze, Unsqueeze, Cast, Sub, Mul; scores divided by sqrt(head_dim)); the script
fails if any expected fusion is missing, if the inputs/outputs (names, dtypes, dynamic
dims) differ from the source graph, or if the fused graph's output on a padded batch
differs from the source graph's by 1e-4 or more on real tokens.

usage: optimize_bert.py MODEL_DIR IN.onnx OUT.onnx
  MODEL_DIR holds the config.json the graph was built from
"""

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.transformers.fusion_options import AttentionMaskFormat, FusionOptions
from onnxruntime.transformers.optimizer import optimize_model

from reference import load_config

MAX_ABS_DIFF = 1e-4


def io_signature(model):
    def sig(values):
        return [(v.name, v.type.tensor_type.elem_type,
                 [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]) for v in values]
    return sig(model.graph.input), sig(model.graph.output)


def run(path, feeds):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(["last_hidden_state"], feeds)[0]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cfg = load_config(sys.argv[1])
    src, out = Path(sys.argv[2]), Path(sys.argv[3])
    heads, hidden, layers = cfg["num_attention_heads"], cfg["hidden_size"], cfg["num_hidden_layers"]

    options = FusionOptions("bert")
    # Mask as lengths (MaskIndexEnd) measured ~24%/17% faster than the plain graph at 128/200
    # tokens, against ~16%/11% when the Attention node gets the raw 2-D mask.
    options.attention_mask_format = AttentionMaskFormat.MaskIndexEnd
    # opt_level=0: only the Python fusions. The session applies ORT's own graph
    # optimizations (level ALL) when it loads the file, as it does for the plain graph.
    opt = optimize_model(str(src), model_type="bert", num_heads=heads, hidden_size=hidden,
                         opt_level=0, optimization_options=options)
    fused = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
    # one SkipLayerNormalization per residual, plus the embeddings' last Add + LayerNorm
    want = {"Attention": layers, "SkipLayerNormalization": 2 * layers + 1, "BiasGelu": layers}
    print(f"fused: {fused}")
    if fused != want:
        sys.exit(f"unexpected fusions {fused}, want {want}: did the graph layout change?")

    tmp = out.with_suffix(".onnx.tmp")
    opt.save_model_to_file(str(tmp))  # adds the com.microsoft opset import the fused ops need
    got, want_io = io_signature(onnx.load(str(tmp))), io_signature(onnx.load(str(src)))
    if got != want_io:
        sys.exit(f"fused graph changed inputs/outputs: {got}, want {want_io}")

    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 30000, size=(4, 48), dtype=np.int64)
    ids[:, 0], mask = 101, np.ones_like(ids)
    mask[1, 30:] = mask[3, 9:] = 0
    types = np.zeros_like(ids)
    types[0, 20:] = 1
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    real = mask.astype(bool)
    diff = float(np.abs(run(src, feeds)[real] - run(tmp, feeds)[real]).max())
    print(f"verify: max |fused - unfused| = {diff:.2e}")
    if not diff < MAX_ABS_DIFF:
        sys.exit(f"fused graph drifted (limit {MAX_ABS_DIFF})")
    tmp.replace(out)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
