#!/usr/bin/env python3
"""Make the int8 variant of a converted encoder with ONNX Runtime's dynamic quantization.

Only MatMuls against weights are quantized (int8 weights per output channel, uint8
activations quantized per batch at run time -> MatMulInteger), which is where ORT's CPU
speed-up comes from. Per-tensor weight scales were tried and lose too much (cosine to
fp32 0.90-0.97 on real sentences, against 0.99 per channel). No reduce_range: these
CPUs have AVX-512 VNNI, where u8s8 products do not saturate.
The attention score MatMuls (both inputs are activations) and the embedding Gathers
stay float: quantizing them costs accuracy for little speed.

The script fails unless mean-pooled, normalised sentence vectors of the int8 model stay
within MIN_COSINE of the float model's on a padded batch.

usage: quantize_int8.py FP32.onnx OUT.onnx
"""

import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic

from reference import mean_pool_normalize

MIN_COSINE = 0.97


def sentence_vectors(path, feeds):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return mean_pool_normalize(sess.run(["last_hidden_state"], feeds)[0], feeds["attention_mask"])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    tmp = out.with_suffix(".onnx.tmp")
    quantize_dynamic(src, tmp, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"],
                     extra_options={"MatMulConstBOnly": True})

    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 30000, size=(4, 48), dtype=np.int64)
    ids[:, 0], mask = 101, np.ones_like(ids)
    mask[1, 30:] = mask[3, 9:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    cos = (sentence_vectors(src, feeds) * sentence_vectors(tmp, feeds)).sum(-1)
    print(f"verify: cosine(int8, fp32) min {cos.min():.4f} mean {cos.mean():.4f}")
    if cos.min() < MIN_COSINE:
        sys.exit(f"int8 model drifted too far from fp32 (limit {MIN_COSINE})")
    tmp.replace(out)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
