#!/usr/bin/env python3
"""Make the int8 variant of a converted encoder with ONNX Runtime's dynamic quantization.

Only MatMuls against weights are quantized (weights per output channel, activations
quantized per tensor at run time -> MatMulInteger), which is where ORT's CPU speed-up
comes from. The attention score MatMuls (both inputs are activations) and the embedding
Gathers stay float: quantizing them costs accuracy for little speed.

One build holds on every x86-64 CPU, because of two choices:

- Weights are uint8, like the activations (U8U8). ORT picks its int8 kernels by CPU, and
  for uint8 x int8 on AVX2 without VNNI it adds the products in saturating int16 pairs,
  which cost cosine 0.971 to fp32 there (0.980 where products are exact: VNNI, SSE).
  U8U8 widens to int16 before multiplying, so it is exact on every path, and on an
  AVX-512 VNNI host it is as fast as U8S8 (7.4 against 7.2 ms CPU per 128-token text).
  reduce_range (7-bit int8 weights) also avoids the saturation but loses more (0.960).
  Per-tensor weight scales were tried and lose too much (0.90-0.97).
- SmoothQuant (Xiao et al., 2023) first moves the outliers of BERT's hidden channels
  from the activations into the weights: the input of each quantized MatMul is divided
  per channel by s = max|x|^ALPHA / max|w|^(1-ALPHA) and the weight's rows multiplied
  by s, which is exact in float. One scale per activation tensor then no longer has to
  span a few huge channels: the worst golden cosine goes from 0.979 to 0.995 (0.993 at
  ALPHA 0.6 and 0.7). The division is a Mul node in the graph, not folded into the
  LayerNormalization before it, because that output also feeds the residual Add. The
  activation maxima come from the float graph on random token ids, seeded.

The script fails unless mean-pooled, normalised sentence vectors of the int8 model stay
within MIN_COSINE of the float model's on a padded batch and on the empty text alone
([CLS] [SEP], where int8 drifted most).

usage: quantize_int8.py FP32.onnx OUT.onnx
"""

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

from reference import mean_pool_normalize

MIN_COSINE = 0.99
ALPHA = 0.65
CLS, SEP = 101, 102


def feeds_of(ids, mask=None):
    mask = np.ones_like(ids) if mask is None else mask
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def activation_maxima(model, names):
    """Per-channel max |x| of the tensors names over random token ids of a few lengths."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for name in names:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    amax = {name: 0.0 for name in names}
    for length in (2, 16, 64, 128):
        ids = rng.integers(1000, 30000, size=(4, length), dtype=np.int64)
        ids[:, 0], ids[:, -1] = CLS, SEP
        for name, out in zip(names, sess.run(names, feeds_of(ids))):
            amax[name] = np.maximum(amax[name], np.abs(out).reshape(-1, out.shape[-1]).max(0))
    return amax


def smooth(model):
    """Rewrite model in place so each weight MatMul's input is divided per channel by s
    and its weight rows multiplied by s (see the module doc)."""
    inits = {i.name: i for i in model.graph.initializer}
    groups = {}  # input tensor -> the weight MatMuls reading it (Q, K and V share one)
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in inits:
            groups.setdefault(node.input[0], []).append(node)
    amax = activation_maxima(model, list(groups))
    for x, nodes in groups.items():
        weights = [numpy_helper.to_array(inits[n.input[1]]) for n in nodes]
        wmax = np.max([np.abs(w).max(1) for w in weights], axis=0)
        s = (np.maximum(amax[x], 1e-5) ** ALPHA / np.maximum(wmax, 1e-5) ** (1 - ALPHA)).astype(np.float32)
        for n, w in zip(nodes, weights):
            inits[n.input[1]].CopyFrom(numpy_helper.from_array(w * s[:, None], n.input[1]))
        inv, smoothed = f"{x}_smooth_inv", f"{x}_smoothed"
        model.graph.initializer.append(numpy_helper.from_array(1 / s, inv))
        model.graph.node.insert(list(model.graph.node).index(nodes[0]),
                                helper.make_node("Mul", [x, inv], [smoothed], name=f"{x}_smooth"))
        for n in nodes:
            n.input[0] = smoothed


def sentence_vectors(path, feeds):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return mean_pool_normalize(sess.run(["last_hidden_state"], feeds)[0], feeds["attention_mask"])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    smoothed, tmp = out.with_suffix(".smooth.onnx"), out.with_suffix(".onnx.tmp")
    model = onnx.load(src)
    smooth(model)
    onnx.save(model, smoothed)
    quantize_dynamic(smoothed, tmp, weight_type=QuantType.QUInt8, per_channel=True, op_types_to_quantize=["MatMul"],
                     extra_options={"MatMulConstBOnly": True})
    smoothed.unlink()

    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 30000, size=(4, 48), dtype=np.int64)
    ids[:, 0], mask = CLS, np.ones_like(ids)
    mask[1, 30:] = mask[3, 9:] = 0
    cos = []
    for feeds in (feeds_of(ids, mask), feeds_of(np.array([[CLS, SEP]], dtype=np.int64))):
        cos.extend((sentence_vectors(src, feeds) * sentence_vectors(tmp, feeds)).sum(-1))
    print(f"verify: cosine(int8, fp32) min {min(cos):.4f} mean {np.mean(cos):.4f} (empty text {cos[-1]:.4f})")
    if min(cos) < MIN_COSINE:
        sys.exit(f"int8 model drifted too far from fp32 (limit {MIN_COSINE})")
    tmp.replace(out)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
