#!/usr/bin/env python3
"""Write ctxd-model.json, the facts the Go embedder needs, from a sentence-transformers
model directory's own config files (so nothing is retyped by hand).

usage: model_manifest.py MODEL_DIR ID OUT.json
"""

import json
import sys
from pathlib import Path


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    d, model_id, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])

    def read(name):
        return json.loads((d / name).read_text())

    pooling_cfg = read("1_Pooling/config.json")
    modes = [m for m in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens")
             if pooling_cfg.get("pooling_mode_" + m)]
    pooling = {"cls_token": "cls", "mean_tokens": "mean"}.get(modes[0]) if len(modes) == 1 else None
    if pooling is None:
        sys.exit(f"unsupported pooling {modes}: the Go embedder does mean or cls")
    modules = [m["type"].rsplit(".", 1)[-1] for m in read("modules.json")]
    prompts = read("config_sentence_transformers.json").get("prompts", {})

    manifest = {
        "id": model_id,
        "dimensions": pooling_cfg["word_embedding_dimension"],
        "pooling": pooling,
        "normalize": "Normalize" in modules,
        # The model's own window; tokenizer.json's truncation (128) is not what
        # sentence-transformers uses.
        "max_tokens": read("sentence_bert_config.json")["max_seq_length"],
        "query_prefix": prompts.get("query", ""),
        "lowercase": read("tokenizer.json")["normalizer"]["lowercase"],
    }
    out.write_text(json.dumps(manifest) + "\n")
    print(f"wrote {out}: {manifest}")


if __name__ == "__main__":
    main()
