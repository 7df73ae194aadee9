"""A plain numpy BERT encoder (float64): the yardstick the ONNX graph is checked against.

It follows transformers' BertModel line by line (absolute positions, post-LayerNorm,
erf GELU, additive attention mask) and shares no code with the graph builder, so a
mistake in one shows up as a difference from the other.
"""

import json
import math
import struct
from pathlib import Path

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def load_config(model_dir):
    cfg = json.loads((Path(model_dir) / "config.json").read_text())
    # The graph and this reference implement exactly this variant of BERT.
    assert cfg["model_type"] == "bert", cfg["model_type"]
    assert cfg["hidden_act"] == "gelu", cfg["hidden_act"]
    assert cfg.get("position_embedding_type", "absolute") == "absolute"
    assert cfg["hidden_size"] % cfg["num_attention_heads"] == 0
    return cfg


def load_safetensors(path):
    """Read a .safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    data = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        start, end = t["data_offsets"]
        arr = np.frombuffer(data, dtype=_DTYPES[t["dtype"]], count=math.prod(t["shape"]) if t["shape"] else 1,
                            offset=base + start).reshape(t["shape"])
        assert arr.nbytes == end - start, name
        # Some exports prefix every key with the architecture name ("bert.").
        out[name.removeprefix("bert.")] = arr.astype(np.float32) if arr.dtype == np.float16 else arr
    return out


def _layer_norm(x, gamma, beta, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def _erf(x):
    # math.erf is exact to double precision; vectorised once over the array.
    return np.vectorize(math.erf, otypes=[np.float64])(x)


class BertReference:
    def __init__(self, cfg, weights):
        self.cfg = cfg
        self.w = {k: v.astype(np.float64) for k, v in weights.items() if v.dtype != np.int64}

    def _linear(self, x, prefix):
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    def last_hidden_state(self, input_ids, attention_mask, token_type_ids):
        cfg, w = self.cfg, self.w
        eps = cfg["layer_norm_eps"]
        heads = cfg["num_attention_heads"]
        b, s = input_ids.shape
        d = cfg["hidden_size"] // heads

        x = (w["embeddings.word_embeddings.weight"][input_ids]
             + w["embeddings.position_embeddings.weight"][np.arange(s)][None]
             + w["embeddings.token_type_embeddings.weight"][token_type_ids])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        bias = (1.0 - attention_mask[:, None, None, :]) * np.finfo(np.float32).min

        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def split(t):
                return t.reshape(b, s, heads, d).transpose(0, 2, 1, 3)

            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            probs = scores / scores.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, heads * d)
            x = _layer_norm(self._linear(ctx, p + "attention.output.dense") + x,
                            w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
            h = self._linear(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
            x = _layer_norm(self._linear(h, p + "output.dense") + x,
                            w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        return x


def mean_pool_normalize(hidden, attention_mask):
    """sentence-transformers' mean pooling over real tokens, then L2 normalisation."""
    m = attention_mask[..., None].astype(hidden.dtype)
    pooled = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    return pooled / np.clip(np.linalg.norm(pooled, axis=-1, keepdims=True), 1e-12, None)
