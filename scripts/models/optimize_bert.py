#!/usr/bin/env python3
"""Fuse a converted encoder with ONNX Runtime's transformer optimizer.

Each layer's attention becomes one Attention node (Q/K/V projections packed into one
MatMul, the raw [batch, sequence] attention_mask as its mask input, so padding on
either side stays exact), the residual Add + LayerNormalization pairs become
SkipLayerNormalization and the FFN bias + erf GELU become BiasGelu. These are CPU
kernels ORT does not reach on its own from the plain graph. EmbedLayerNormalization is
not fused: it wants int32 ids and a different position-embedding subgraph, and the
embeddings are a negligible share of the time.

The graph bert_to_onnx.py writes is laid out so the fusions match (mask built as
Unsqueeze, Unsqueeze, Cast, Sub, Mul; scores divided by sqrt(head_dim)); the script
fails if any expected fusion is missing, if the inputs/outputs (names, dtypes, dynamic
dims) differ from the source graph, or if the fused graph's output on a padded batch
differs from the source graph's by 1e-4 or more on real tokens.

usage: optimize_bert.py IN.onnx OUT.onnx NUM_HEADS HIDDEN_SIZE NUM_LAYERS
"""

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.transformers.fusion_options import AttentionMaskFormat, FusionOptions
from onnxruntime.transformers.optimizer import optimize_model

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
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    heads, hidden, layers = map(int, sys.argv[3:])

    options = FusionOptions("bert")
    options.attention_mask_format = AttentionMaskFormat.AttentionMask
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

    model = opt.model
    model.producer_name = onnx.load(str(src), load_external_data=False).producer_name
    if io_signature(model) != io_signature(onnx.load(str(src), load_external_data=False)):
        sys.exit(f"fused graph changed inputs/outputs: {io_signature(model)}")
    onnx.checker.check_model(model)
    tmp = out.with_suffix(".onnx.tmp")
    onnx.save(model, str(tmp))

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
