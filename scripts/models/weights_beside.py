#!/usr/bin/env python3
"""Move an ONNX graph's weights out of model.onnx into model.onnx.data beside it.

ONNX Runtime memory-maps a weights file on the CPU instead of copying the weights into
its own memory: the daemon then holds the int8 model in ~50 MB less anonymous memory,
and of the 47 MB fp32 word-embedding table only the rows of tokens it has embedded are
resident. The numbers are the same bytes; only where they are kept changes.

usage: weights_beside.py DIR/model.onnx
"""

import sys
from pathlib import Path

import onnx

DATA = "model.onnx.data"  # index/embed.ModelDataFile


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = Path(sys.argv[1])
    model = onnx.load(path)  # with any weights already beside it
    # onnx appends to an existing data file, so a rerun starts it anew.
    (path.parent / DATA).unlink(missing_ok=True)
    tmp = path.with_suffix(".tmp")
    # Every tensor of 1 KiB or more goes to the data file, each at an offset ORT can map
    # (onnx aligns them to the page size).
    onnx.save_model(model, tmp, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=DATA, size_threshold=1024)
    onnx.checker.check_model(str(tmp))
    tmp.replace(path)


if __name__ == "__main__":
    main()
