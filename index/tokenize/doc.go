// Package tokenize turns text into the token ids a BERT-family sentence
// model (all-MiniLM-L6-v2, bge-small-en-v1.5) takes as input, and counts
// tokens for the chunker.
//
// It owns the whole text-to-ids step: added (special) tokens, the
// BertNormalizer (clean_text, handle_chinese_chars, strip_accents,
// lowercase), the BertPreTokenizer (whitespace and punctuation splitting),
// WordPiece, and the [CLS] … [SEP] template with truncation. It knows
// nothing of ONNX, batching or padding beyond reporting the [PAD] id: that is
// index/embed's job.
//
// # Exactness
//
// The output is meant to equal the HuggingFace `tokenizers` package's
// (the reference the models were trained with) id for id, on any valid
// UTF-8 input. Where the reference's character tables differ from Go's
// Unicode 15.0.0 tables (its Cf, Mn and punctuation tables are older than
// Unicode 11, its NFD predates Unicode 13, its lowercase is Unicode 16),
// tables.go records the exceptions, so that every single code point is
// treated as the reference treats it. That was checked for all code points
// (TestUnicodeClasses_Reference with -refdump) and on tens of thousands of
// random mixed-script strings with tokenizers 0.23.3; TestTokenizer_Golden
// checks the installed model against the golden file `make setup` writes.
//
// Behaviour worth knowing, all shared with the reference:
//   - Added tokens ("[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]") are
//     matched case-sensitively in the raw text and become their special
//     ids: user text containing "[SEP]" yields a real separator.
//   - clean_text drops control and format characters (Cc, Cf, Co), including
//     U+200B ZERO WIDTH SPACE, U+00AD SOFT HYPHEN and U+FEFF, while all
//     Unicode whitespace (NBSP, U+3000 …) separates words. Invalid UTF-8
//     bytes are dropped like U+FFFD.
//   - Emoji and other symbols are not punctuation: "a😀b" is one word, and
//     usually one [UNK]. A word with any part missing from the vocabulary,
//     or longer than 100 characters, is a single [UNK].
//   - Lowercasing is per character (no final-sigma rule); İ becomes "i"
//     plus a combining dot, which accent stripping then drops.
//
// # Caveats
//
//   - Only the BERT pipeline is supported: Load rejects a tokenizer.json whose
//     model, normalizer, pre-tokenizer or post-processor is anything else,
//     and added tokens with single_word or normalized set (BERT models have
//     none). lstrip/rstrip on added tokens need no handling, since the
//     whitespace they would absorb is dropped anyway.
//   - Not checked: canonical reordering by NFD of combining marks assigned
//     after the reference's Unicode version, and code points that Go's
//     tables and the reference both leave unassigned today but a future Go
//     release assigns. Re-run the -refdump check when Go's unicode.Version
//     changes.
//   - Encode truncates at the end only (the reference's LongestFirst on a
//     single sequence); there is no stride or pair encoding.
package tokenize
