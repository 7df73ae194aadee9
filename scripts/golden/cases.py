"""The inputs of the golden files. Escapes rather than literal characters wherever a
character is invisible or easy to confuse, so a reader sees what is being tested."""

# Prose long enough that the model's 256-token window cuts it (about 420 tokens).
LONG_PROSE = " ".join(
    f"Section {i}: the daemon keeps an agent's notes, plans and fetched pages as items in a "
    "virtual filesystem, chunks them by structure, embeds every chunk locally and answers "
    "hybrid queries that mix BM25 with cosine similarity over normalised vectors."
    for i in range(1, 11)
)

# Code long enough to be truncated too, with the dense punctuation code tokenizes into.
LONG_CODE = "\n".join(
    f"func handler{i}(w http.ResponseWriter, r *http.Request) {{ if err := r.ParseForm(); "
    f"err != nil {{ http.Error(w, err.Error(), {400 + i}); return }} }}"
    for i in range(12)
)

TOKENIZER_CASES = [
    "",
    "   ",
    " \t\n\r ",
    "Hello, World!",
    "café naïve Ångström",
    "CAFÉ NAÏVE ÅNGSTRÖM",
    "e\u0301cole A\u030a",  # decomposed: base letter + combining acute / ring above
    "non\u00a0breaking\u00a0space\u00a0",
    "ideographic\u3000space and\u2003em\u2009thin spaces",
    "zero\u200bwidth\u200djoiner\ufeffbom\u00adsoft-hyphen",  # format characters (Cf)
    "bell\x07 nul\x00 esc\x1b[0m del\x7f c1\x85 replacement\ufffd",  # control characters
    "tabs\tand\nnewlines\r\nhere",
    "日本語のテキスト",
    "中文分词测试，标点符号。",
    "한국어 텍스트",
    "สวัสดีครับ",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "Ελληνικά κείμενο με τόνους",
    "Привет, мир! Ёжик",
    "İstanbul ß Straße Ǆ ǅ",
    "ﬁ ligature ＦＵＬＬＷＩＤＴＨ ½ ² ①",
    "👍🏽 ok",
    "emoji 🎉🚀 party 👨\u200d👩\u200d👧",
    "!!!???...",
    "“smart quotes” ‘single’ — em dash… ellipsis",
    "don't won't it's rock'n'roll",
    "MiXeD CaSe TeXt WITH ACRONYMS like HTTPServer",
    "3.14159 and 1,000,000 and 2026-11-21 and 10kg 5×3",
    "https://example.com/path/to/page?query=1&b=two#frag",
    "user.name+tag@example.co.uk",
    "useEffect(() => {})",
    "func (s *Server) Write(ctx context.Context) error { return nil }",
    "snake_case_identifier camelCaseIdentifier kebab-case-identifier",
    "# Heading\n\n- item **bold** `code`\n\n> quote",
    "[CLS] [SEP] [MASK] [UNK] [PAD] hello[MASK]world",  # special tokens written in text
    "[cls] [mask]",  # lowercase: not the special tokens
    "x" * 100,  # WordPiece gives up on words longer than 100 characters...
    "x" * 101,  # ...so this one is [UNK]
    "supercalifragilistic" * 25,  # a 500-character word
    "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    LONG_PROSE,
    LONG_CODE,
]

EMBEDDING_CASES = [
    "hello world",
    "",
    "   ",
    "The quick brown fox jumps over the lazy dog.",
    "How do I configure a systemd user service to restart on failure?",
    "ctxd keeps an agent's knowledge as items in a virtual filesystem.",
    "A search for passages about raft consensus and leader election.",
    "café naïve Ångström: accents are stripped by the tokenizer",
    "日本語のテキストを埋め込む",
    "Привет, мир! Это тест.",
    "👍🏽 ok, ship it 🚀",
    "non\u00a0breaking\u00a0spaces\tand\ttabs\nand newlines",
    "3.14159 is approximately pi; e is 2.71828.",
    "https://example.com/docs/getting-started?lang=en#install",
    "useEffect(() => { fetchData(); }, [])",
    "func (s *Server) Write(ctx context.Context, req *WriteRequest) (*WriteResponse, error) {",
    "SELECT id, name FROM users WHERE created_at > now() - interval '1 day';",
    "# Plan\n\n- ship the store\n- ship the API\n\n```go\nfmt.Println(\"hi\")\n```",
    LONG_PROSE,
    LONG_CODE,
]
