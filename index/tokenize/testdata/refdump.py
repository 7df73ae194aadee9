"""Dump how the reference tokenizer treats every code point.

Usage: python refdump.py OUT.tsv   (needs `pip install tokenizers`)

One line per code point (surrogates excepted), tab-separated:
code point, BertNormalizer clean_text output, "C" if handle_chinese_chars
spaces it, strip_accents output, lowercase output (outputs as hex code
points, "-" when empty), and the BertPreTokenizer class of the character
between two letters: W whitespace, P punctuation, N neither.
TestUnicodeClasses_Reference -refdump OUT.tsv compares the Go side with it.
"""
import sys

from tokenizers import normalizers, pre_tokenizers

clean = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
cjk = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False)
strip = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
lower = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)
pre = pre_tokenizers.BertPreTokenizer()


def h(x):
    return " ".join("%x" % ord(ch) for ch in x) or "-"


with open(sys.argv[1], "w") as out:
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        words = [w for w, _ in pre.pre_tokenize_str("a" + c + "a")]
        if words == ["a", "a"]:
            cls = "W"
        elif words == ["a", c, "a"]:
            cls = "P"
        elif words == ["a" + c + "a"]:
            cls = "N"
        else:
            cls = "X" + repr(words)
        out.write("%x\t%s\t%s\t%s\t%s\t%s\n" % (
            cp, h(clean.normalize_str(c)), "C" if cjk.normalize_str(c) != c else "-",
            h(strip.normalize_str(c)), h(lower.normalize_str(c)), cls))
