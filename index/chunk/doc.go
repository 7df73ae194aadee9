// Package chunk splits an item's content into chunks that an embedding model
// sees whole: deterministic, structure-aware, and bounded in model tokens.
//
// It owns the choice of chunk boundaries and breadcrumb headings and the
// exact text that is embedded for a chunk (EmbedText). It does not tokenize
// (a Counter, normally *tokenize.Tokenizer, counts tokens), embed, or store
// anything: chunks are byte spans into the content, which callers keep.
//
// # Guarantees
//
//   - Every chunk's Tokens, the token count of EmbedText(Heading, text)
//     (with a prefix, AppendEmbedText's) plus 2 for [CLS]/[SEP], is at most maxTokens and equals a fresh count: Split
//     counts every chunk it emits afresh, and re-splits one that does not fit
//     (see Counting). A chunk the model cannot see whole is a bug.
//   - Spans map exactly back to the content, are in order, do not overlap,
//     neither start nor end with whitespace, fall on UTF-8 rune boundaries,
//     and together cover every non-whitespace byte (gaps hold only
//     whitespace, as unicode.IsSpace defines it).
//   - Same input, same output; time is linear in the content size (a few
//     passes of the Counter over each byte).
//   - Empty or whitespace-only content yields no chunks.
//
// # Sizes
//
// maxTokens is the model window including [CLS]/[SEP] (256 for
// all-MiniLM-L6-v2, 512 for bge-small). Two sizes follow from it:
//
//   - the window: one block, line or markdown section that fits the whole
//     window is never split;
//   - the target, TargetPercent (75%) of the window: smaller pieces are
//     merged greedily only while the chunk stays within the target. Merging
//     to the full window would make fewer, blurrier chunks (a mean-pooled
//     vector of 250 tokens of mixed topics matches nothing well); not merging
//     at all would leave many one-line chunks. 75% keeps related short
//     sections together and leaves room for the breadcrumb. On the docs
//     corpus (tldr, Rust book, React docs, Git docs, man pages, PHP manual)
//     chunks average about 150 of 256 tokens, about 3 per document.
//
// A chunk is also at most 64 bytes per window token (16 KiB for 256): text
// WordPiece collapses into one [UNK] (a word over 100 characters without
// punctuation, such as a hex blob) cannot make a chunk arbitrarily large.
//
// # Structure
//
// The structure is chosen from the mime type, then the path's extension:
// text/markdown, text/x-markdown, .md, .markdown, .mdx are markdown;
// application/json, text/json, any +json type and .json are JSON; everything
// else (source code, plain text, man pages, AsciiDoc, …) is text.
//
// Text and code: the whole content if it fits the window; else blocks
// separated by blank lines, packed greedily up to the target; a block over
// the window is split into lines (packed the same way), and a line over the
// window into slices of at most the target, cut between words (at
// whitespace, or next to a CJK ideograph, which BERT treats as a word of its
// own, so unspaced Chinese is cut between characters); a single word over
// the target is cut at the largest rune boundary that fits (just after
// ASCII punctuation when there is some near the end), each such slice its
// own chunk.
//
// Markdown: sections start at ATX headings H1–H4 ("#" to "####" after at
// most three spaces; H5 and H6 are body text) and at setext headings (a
// one-line paragraph underlined by three or more "=" for H1 or "-" for H2;
// a "---" after a blank line, a list item, a quote, a table row or HTML is
// a rule, not a heading). A section's breadcrumb joins the texts of the
// enclosing headings and its own with " > ", e.g. "Install > Linux >
// Debian"; heading texts lose a closing "#" sequence and a trailing "{#id}"
// or MDX "{/*id*/}". The heading line stays in the chunk text, so the
// embedded text repeats it after the breadcrumb. Lines inside fenced code
// (``` or ~~~, any indentation, closed by a fence of the same character at
// least as long; unclosed runs to the end) are never headings, and a fenced
// block is one block, split by lines only when it alone exceeds the window.
// Front matter (YAML "---" … "---"/"...", or TOML "+++" … "+++", at the very
// start) is one block of the preamble (the section before the first
// heading, breadcrumb ""), so its "#" comments and "---" lines are not
// headings. (The store chunks an item's body after the frontmatter it
// parsed, so only malformed frontmatter, kept as text, reaches Split.) A section holding only its heading, directly followed by a
// subsection ("# A" then "## B"), is joined to that subsection, so a bare
// heading never becomes a chunk of its own.
//
// Sections that fit the window are merged with following ones while the
// result, breadcrumb included, stays within the target. A merged chunk's
// heading is the breadcrumb of the sections' common parent (the longest
// common prefix of their breadcrumbs): "Install > Linux" and
// "Install > Mac" merge under "Install", a section and its subsections
// under the section, and the preamble with anything under "". The specific
// headings remain in the chunk text. A section over the window is split
// like text (blocks, lines, slices) under its own breadcrumb and never
// merged with its neighbours; its heading line is kept with its first block
// when the two fit the window together.
//
// JSON (when it parses; otherwise it is text): the whole document if it fits
// the window; else the root's members (object keys or array elements) are
// packed greedily up to the target under the root's path "", and a member
// that does not fit the window is descended into, its members packed under
// its key path, e.g. "spec.containers[0]" (keys with dots, brackets, quotes,
// whitespace or control characters are quoted: `["a b"]`). The Heading of a
// JSON chunk is thus the path of the object or array whose members it
// holds. A member's span runs from its key to the next member's key (the
// first member's from its container's opening bracket, and the parent's key
// if any; the last member's to the closing bracket), so every bracket and
// comma lands in a chunk. Scalars too big for
// the window (long strings), and values nested deeper than 32 levels, are
// split as text.
//
// # Headings
//
// A heading may take at most HeadingPercent (25%) of the window (63 tokens
// for 256). A longer breadcrumb first drops its leading parts, replaced by
// "…" ("… > Linux > Debian", "….containers[0].env"); if its last part alone
// is still too long, that part is cut at a rune boundary (at whitespace when
// there is some in its second half) and "…" appended.
//
// # Prefix
//
// SplitWithPrefix chunks an item whose every chunk embeds a prefix before
// its heading: the item's title and description (Prefix joins them and cuts
// them like a heading, to at most HeadingPercent of the window), so each
// chunk carries what the whole item is about. Budgets leave room for it,
// Tokens counts it, and AppendEmbedText builds the exact embedded text.
//
// # Counting
//
// Split counts each block (and, only for blocks over the window, each line
// and word) once and sums, rather than re-counting growing strings.
// WordPiece counts are additive across whitespace and punctuation (BERT
// pre-tokenization splits there), and every cut Split makes between packed
// pieces is at whitespace or, in JSON, next to punctuation, so the sums are
// exact for *tokenize.Tokenizer. Emitted chunks are counted afresh anyway;
// should a Counter disagree with a sum (or a cut inside a word change the
// count), the chunk is re-split finer, down to single runes if need be.
//
// # Caveats
//
//   - Split panics if maxTokens < MinWindow (16) or the Counter is nil.
//   - Content must be valid UTF-8 (callers guarantee it); invalid bytes are
//     treated as non-whitespace and never crash Split, but spans may then
//     fall inside them.
//   - Markdown parsing is line-based, not a full CommonMark parser:
//     headings inside HTML blocks or block quotes are not recognised, a
//     setext heading must be a one-line paragraph, and fenced code nested in
//     a block quote is not recognised as a fence.
//   - AsciiDoc ("= Title"), reStructuredText and man-page headings are not
//     recognised: such documents are chunked as text.
//   - A cut inside a word (only for a word longer than the target) embeds
//     two half-words; the model sees both whole, but neither reads
//     naturally.
package chunk
