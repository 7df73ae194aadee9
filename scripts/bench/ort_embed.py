"""Plain onnxruntime baseline for `make bench-embed-compare` (issue 14).

Runs a model file the way a plain onnxruntime user would: one InferenceSession with the given
intra-op threads and everything else at onnxruntime's defaults, batches of `--batch` inputs of
`--tokens` tokens ([CLS], random word-piece ids, [SEP]; attention on every token), after one
warm-up batch. The last stdout line is JSON: {"onnxruntime": <version>, "chunks_per_s": ...}.

    python ort_embed.py --model DIR/model.onnx --threads 2 --batch 32 --tokens 128 --texts 256
"""

import argparse
import json
import time

import numpy as np
import onnxruntime as ort

CLS, SEP = 101, 102  # BERT word-piece ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--tokens", type=int, required=True)
    ap.add_argument("--texts", type=int, required=True)
    a = ap.parse_args()
    if a.batch < 1 or a.tokens < 3 or a.texts < a.batch or a.threads < 1:
        ap.error("want --threads >= 1, --batch >= 1, --tokens >= 3, --texts >= --batch")

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    ids = rng.integers(1000, 30000, size=(a.batch, a.tokens), dtype=np.int64)
    ids[:, 0], ids[:, -1] = CLS, SEP
    feed = {}
    for i in sess.get_inputs():
        if i.name == "input_ids":
            feed[i.name] = ids
        elif i.name == "attention_mask":
            feed[i.name] = np.ones_like(ids)
        elif i.name == "token_type_ids":
            feed[i.name] = np.zeros_like(ids)
        else:
            raise SystemExit(f"ort_embed: unexpected model input {i.name}")

    sess.run(None, feed)  # warm-up
    runs = a.texts // a.batch
    start = time.perf_counter()
    for _ in range(runs):
        sess.run(None, feed)
    elapsed = time.perf_counter() - start
    print(json.dumps({"onnxruntime": ort.__version__, "chunks_per_s": runs * a.batch / elapsed}))


if __name__ == "__main__":
    main()
