"""Plain onnxruntime baseline for `make bench-embed-compare` (issues 14 and 31).

Runs a model file the way a plain onnxruntime user would: one InferenceSession with the given
intra-op threads and everything else at onnxruntime's defaults, batches of `--batch` inputs of
`--tokens` tokens ([CLS], random word-piece ids, [SEP]; attention on every token), after one
warm-up batch. The last stdout line is JSON: {"onnxruntime": <version>, "chunks_per_s": ...,
"cpu_s": <CPU seconds of the process, every thread, over the timed batches>}.

    python ort_embed.py --model DIR/model.onnx --threads 2 --batch 32 --tokens 128 --texts 256

With `--ids FILE` (JSON lines, one list of token ids per text, [CLS] and [SEP] included) it
embeds those texts instead, as sentence-transformers batches them: sorted by length, longest
first, in batches of `--batch` padded to their longest text (`--tokens` and `--texts` unused).

    python ort_embed.py --model DIR/model.onnx --threads 2 --batch 32 --ids chunks.jsonl
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
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--texts", type=int, default=256)
    ap.add_argument("--ids")
    a = ap.parse_args()
    if a.batch < 1 or a.tokens < 3 or a.texts < a.batch or a.threads < 1:
        ap.error("want --threads >= 1, --batch >= 1, --tokens >= 3, --texts >= --batch")

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    for n in names:
        if n not in ("input_ids", "attention_mask", "token_type_ids"):
            raise SystemExit(f"ort_embed: unexpected model input {n}")

    if a.ids:
        with open(a.ids) as f:
            texts = sorted((json.loads(line) for line in f if line.strip()), key=len, reverse=True)
        if not texts:
            raise SystemExit(f"ort_embed: {a.ids} holds no texts")
        batches = [padded(texts[i : i + a.batch]) for i in range(0, len(texts), a.batch)]
    else:
        rng = np.random.default_rng(1)
        ids = rng.integers(1000, 30000, size=(a.batch, a.tokens), dtype=np.int64)
        ids[:, 0], ids[:, -1] = CLS, SEP
        batches = [(ids, np.ones_like(ids))] * (a.texts // a.batch)

    def feed(ids, mask):
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return {n: inputs[n] for n in names}

    sess.run(None, feed(*batches[-1]))  # warm-up
    start, cpu = time.perf_counter(), time.process_time()
    for ids, mask in batches:
        sess.run(None, feed(ids, mask))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    n = sum(len(ids) for ids, _ in batches)
    print(json.dumps({"onnxruntime": ort.__version__, "chunks_per_s": n / elapsed, "cpu_s": cpu}))


def padded(seqs):
    """Pads token id lists to the longest: ids and attention mask, int64 [batch, longest]."""
    longest = max(len(s) for s in seqs)
    ids = np.zeros((len(seqs), longest), dtype=np.int64)
    mask = np.zeros_like(ids)
    for k, s in enumerate(seqs):
        ids[k, : len(s)], mask[k, : len(s)] = s, 1
    return ids, mask


if __name__ == "__main__":
    main()
