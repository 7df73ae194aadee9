#!/usr/bin/env python3
"""Convert a BERT encoder from safetensors to ONNX, offline, with onnx and numpy only.

No model hub is reachable here and torch is too heavy for `make setup`, so the graph is
written out by hand from the HuggingFace BertModel definition (absolute position
embeddings, post-LayerNorm, erf GELU). The graph stops at last_hidden_state: pooling
(mean or CLS) and L2 normalisation are the Go embedder's job, so one graph serves
every pooling mode.

  inputs   input_ids, attention_mask, token_type_ids   int64   [batch, sequence]
  output   last_hidden_state                           float32 [batch, sequence, hidden]

Before writing the file the graph is run with ONNX Runtime on a padded batch and
compared with a float64 numpy forward pass of the same weights (reference.py); the
script fails if any value differs by 1e-4 or more.

usage: bert_to_onnx.py MODEL_DIR OUT.onnx
  MODEL_DIR holds config.json and model.safetensors
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from reference import BertReference, load_config, load_safetensors

OPSET = 17  # first opset with LayerNormalization; the Go side runs ORT >= 1.24
MAX_ABS_DIFF = 1e-4


class GraphBuilder:
    """Collects nodes and initializers; every name it hands out is unique."""

    def __init__(self):
        self.nodes = []
        self.inits = []
        self._n = 0

    def const(self, name, array):
        # np.asarray, not np.ascontiguousarray: the latter turns a 0-d scalar into shape
        # [1], and ORT's transformer optimizer needs the attention mask's fill value to
        # be a true scalar (it calls float() on it).
        self.inits.append(numpy_helper.from_array(np.asarray(array, order="C"), name))
        return name

    def op(self, op_type, inputs, **attrs):
        self._n += 1
        out = f"{op_type.lower()}_{self._n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"n{self._n}_{op_type}", **attrs))
        return out

    def linear(self, x, w, b, prefix):
        # torch stores Linear weights as [out, in]; MatMul wants [in, out].
        return self.op("Add", [self.op("MatMul", [x, self.const(prefix + ".weight", w.T)]),
                               self.const(prefix + ".bias", b)])

    def layer_norm(self, x, gamma, beta, eps, prefix):
        return self.op("LayerNormalization", [x, self.const(prefix + ".weight", gamma),
                                              self.const(prefix + ".bias", beta)],
                       axis=-1, epsilon=eps)


def build_graph(cfg, w):
    hidden = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(cfg["layer_norm_eps"])
    g = GraphBuilder()

    # Embeddings: word + absolute position (0..seq-1) + token type, then LayerNorm.
    # Positions 0..seq-1 are the first seq rows of the position table: a Slice, not
    # Range + Gather (ORT 1.24 rewrites that pair into a Slice it then rejects:
    # "Starts must be a 1-D array").
    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)
    positions = g.op("Slice", [g.const("embeddings.position_embeddings.weight", w["embeddings.position_embeddings.weight"]),
                               g.const("zero_1d", np.array([0], np.int64)), seq_len, g.const("zero_1d_axes", np.array([0], np.int64))])
    x = g.op("Add", [g.op("Gather", [g.const("embeddings.word_embeddings.weight", w["embeddings.word_embeddings.weight"]), "input_ids"]),
                     positions])
    x = g.op("Add", [x, g.op("Gather", [g.const("embeddings.token_type_embeddings.weight", w["embeddings.token_type_embeddings.weight"]), "token_type_ids"])])
    x = g.layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps, "embeddings.LayerNorm")

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, float32 min on
    # padding, as transformers builds it, so padded keys get zero weight. The node order
    # (Unsqueeze, Unsqueeze, Cast, Sub, Mul) is the one ORT's transformer optimizer
    # matches when it fuses each layer's attention into one Attention node.
    keep = g.op("Unsqueeze", [g.op("Unsqueeze", ["attention_mask", g.const("axis_1", np.array([1], np.int64))]),
                              g.const("axis_2", np.array([2], np.int64))])
    keep = g.op("Cast", [keep], to=TensorProto.FLOAT)
    mask = g.op("Mul", [g.op("Sub", [g.const("one_f32", np.array(1, np.float32)), keep]),
                        g.const("mask_fill", np.array(np.finfo(np.float32).min, np.float32))])

    split_heads = g.const("split_heads_shape", np.array([0, 0, heads, head_dim], np.int64))
    merge_heads = g.const("merge_heads_shape", np.array([0, 0, hidden], np.int64))
    # Scores are divided by sqrt(head_dim), as transformers does: with a Mul by its
    # inverse the optimizer mistakes that Mul for the mask's and skips the fusion.
    sqrt_head_dim = g.const("sqrt_head_dim", np.array(np.sqrt(head_dim), np.float32))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2), np.float32))
    half = g.const("half", np.array(0.5, np.float32))

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        att = p + "attention.self."

        def heads_of(name, perm):
            y = g.linear(x, w[att + name + ".weight"], w[att + name + ".bias"], att + name)
            return g.op("Transpose", [g.op("Reshape", [y, split_heads])], perm=perm)

        q = heads_of("query", [0, 2, 1, 3])  # [b, h, s, d]
        k = heads_of("key", [0, 2, 3, 1])    # [b, h, d, s]
        v = heads_of("value", [0, 2, 1, 3])  # [b, h, s, d]
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), sqrt_head_dim]), mask])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_heads])
        attn_out = g.linear(ctx, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"], p + "attention.output.dense")
        x = g.layer_norm(g.op("Add", [attn_out, x]), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"], eps, p + "attention.output.LayerNorm")

        # FFN with exact (erf) GELU: 0.5 * h * (1 + erf(h / sqrt(2))).
        h = g.linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"], p + "intermediate.dense")
        h = g.op("Mul", [g.op("Mul", [h, half]), g.op("Add", ["one_f32", g.op("Erf", [g.op("Div", [h, sqrt2])])])])
        ffn_out = g.linear(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"], p + "output.dense")
        x = g.layer_norm(g.op("Add", [ffn_out, x]), w[p + "output.LayerNorm.weight"],
                         w[p + "output.LayerNorm.bias"], eps, p + "output.LayerNorm")

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    def io(name, elem, dims):
        return helper.make_tensor_value_info(name, elem, dims)

    graph = helper.make_graph(
        g.nodes, "bert_encoder",
        [io(n, TensorProto.INT64, ["batch", "sequence"]) for n in ("input_ids", "attention_mask", "token_type_ids")],
        [io("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])],
        initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="ctxd-bert-to-onnx", producer_version="1")
    model.ir_version = 8  # readable by every ORT >= 1.14
    return model


def verify(model_path, cfg, w):
    """Run the ONNX file in ONNX Runtime and compare with the numpy reference."""
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    batch, seq = 3, 40
    ids = rng.integers(1000, cfg["vocab_size"], size=(batch, seq), dtype=np.int64)
    ids[:, 0] = 101  # [CLS]
    mask = np.ones((batch, seq), np.int64)
    mask[1, 25:] = 0  # padded rows: the mask has to matter
    mask[2, 7:] = 0
    types = np.zeros((batch, seq), np.int64)
    types[0, 20:] = 1

    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    got = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
    want = BertReference(cfg, w).last_hidden_state(ids, mask, types)
    assert got.shape == (batch, seq, cfg["hidden_size"]) and got.dtype == np.float32, (got.shape, got.dtype)
    # Padding positions carry garbage by design (nothing reads them); compare real tokens.
    real = mask.astype(bool)
    diff = float(np.abs(got[real] - want[real]).max())
    # A row padded to 40 must give the same vectors as the same row unpadded.
    short = sess.run(["last_hidden_state"], {"input_ids": ids[2:, :7], "attention_mask": mask[2:, :7],
                                             "token_type_ids": types[2:, :7]})[0]
    pad_diff = float(np.abs(short[0] - got[2, :7]).max())
    print(f"verify: max |onnxruntime - numpy| = {diff:.2e}, padded vs unpadded = {pad_diff:.2e}")
    if not (diff < MAX_ABS_DIFF and pad_diff < MAX_ABS_DIFF):
        sys.exit(f"verification failed (limit {MAX_ABS_DIFF})")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    cfg = load_config(model_dir)
    w = load_safetensors(model_dir / "model.safetensors")
    model = build_graph(cfg, w)
    onnx.checker.check_model(model, full_check=True)
    tmp = out.with_suffix(".onnx.tmp")
    onnx.save(model, str(tmp))
    verify(tmp, cfg, w)
    tmp.replace(out)  # only a verified model ever gets the real name
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
