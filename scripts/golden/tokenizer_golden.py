#!/usr/bin/env python3
"""Golden tokenizer output: what HuggingFace `tokenizers` makes of cases.TOKENIZER_CASES
with the model's own tokenizer.json.

tokenizer.json as shipped pads every input to 128 and truncates at 128. That is not how
the model is used: sentence-transformers truncates at max_seq_length (256, from
sentence_bert_config.json) and pads a batch only to its longest member. So padding is
switched off and truncation set to max_seq_length tokens including [CLS] and [SEP],
which is what the Go tokenizer must reproduce.

Text that spells a special token ("[CLS]", "[MASK]") is matched as that token, as
tokenizers and sentence-transformers do; lowercase "[cls]" is not.

One JSON object per line:
  text                 the input
  ids, tokens          with [CLS]/[SEP], truncated to 256
  ids_untruncated_len  length of ids (with [CLS]/[SEP]) without truncation

usage: tokenizer_golden.py MODEL_DIR OUT.jsonl
  MODEL_DIR holds tokenizer.json and sentence_bert_config.json
"""

import json
import sys
from pathlib import Path

from tokenizers import Tokenizer

from cases import TOKENIZER_CASES


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model_dir, out = Path(sys.argv[1]), sys.argv[2]
    path = str(model_dir / "tokenizer.json")
    max_tokens = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    tok = Tokenizer.from_file(path)
    tok.no_padding()
    full = Tokenizer.from_file(path)
    full.no_padding()
    full.no_truncation()
    tok.enable_truncation(max_length=max_tokens)

    with open(out, "w", encoding="utf-8") as f:
        for text in TOKENIZER_CASES:
            enc = tok.encode(text)
            rec = {"text": text, "ids": enc.ids, "tokens": enc.tokens,
                   "ids_untruncated_len": len(full.encode(text).ids)}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"wrote {out}: {len(TOKENIZER_CASES)} cases, truncated at {max_tokens}")


if __name__ == "__main__":
    main()
