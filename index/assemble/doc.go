// Package assemble keeps an agent's persistent context and assembles the
// context of one task from it (issue 11): it is what a harness would
// otherwise write itself around ctxd. It owns no storage; context files are
// ordinary items of the store (vfs) and chunks come from the search engine
// (index/search).
//
// # Context files
//
// A context file is a text item under a context root (a directory ref,
// vfs.DefaultContextRoots by default; a request may name others such as
// "self:/researcher/", so several agents can share one daemon) whose YAML
// frontmatter sets loading (vfs parses it on every write: Item.Loading):
//
//	loading: always      included verbatim in every context
//	loading: contextual  included when the task matches it (see Relevance)
//	agent-modification   whether an agent token may change it (default
//	                     false); the store's guard enforces it, not this
//	                     package
//
// Dropping a new file under a root is enough for it to take part. Init
// creates the four files an agent starts with, only where absent (a write
// with vfs.ConflictSkip, so two Inits cannot both create one): soul.md
// (read-only to agents), beliefs.md, goals.md and capabilities.md (a static
// inventory of what ctxd offers an agent, by theme). Update replaces a
// file's body and keeps its frontmatter byte-for-byte (the seed's
// update_beliefs / update_goals), as the caller's actor with the operation
// vfs.OpContextUpdate, expecting the content it read so that a concurrent
// change is refused (vfs.ErrChanged) rather than lost.
//
// # Building a context
//
// Builder.Build fills a token budget in a fixed order of priority: the
// always files (soul, beliefs, goals, capabilities, then by ref), then the
// contextual files the task matches (best first), then the top chunks of a
// hybrid search for the task (index/search, with the request's mode,
// filters and limit), each labelled with its drive:/path ref, lines and
// heading. The search never adds a chunk of a context file: a context
// file is included whole by its loading rule or not at all, so an
// irrelevant contextual file does not come back in pieces. A section
// that does not fit is left out whole, never cut, and smaller later ones
// are still tried; every section left out is listed in Result.Omitted with
// its reason and the tokens it needed. The result is both structured
// (Sections) and one Markdown block whose group and section headers are
// counted against the budget too: TokensUsed is the token count of
// Markdown itself.
//
// Tokens are counted with the embedding model's tokenizer, the one that
// cut the chunks. Without a loaded model they are estimated at one per 4
// bytes (as the search engine estimates snippets) and Result.Warnings says
// so: the estimate can be off either way, so a caller should leave room.
//
// # Relevance
//
// A contextual file is relevant when the task matches it substantively
// under Okapi BM25 (k1 = 1.2, b = 0.75, Lucene's IDF). The task and each
// file's title, description and body are analysed with the lexical index's
// English analyzer (lower case, stop words dropped, Porter stemming), so
// "invoices" matches "invoicing" and "the" or "with" match nothing. Each
// task term is weighed by its IDF over the whole store: the number of
// chunks in the lexical index and how many of them hold the term
// (search.Engine.TermStats), so a word most notes use ("sent", "use")
// weighs little and a word few notes hold weighs much. A term no chunk
// holds yet but a contextual file does (a file written a moment ago) counts
// as held by that many documents; a term nothing holds weighs nothing, as
// it cannot tell the files apart. The files read here come from the same
// store snapshot as the always files, so a new file takes part before the
// index applies it.
//
// A file matches when the summed IDF of the task terms it holds (its match
// weight) reaches RelevantShare (25%) of the summed IDF of all the task's
// weighed terms, or RelevantWeight (4.6), whichever is lower:
//
//   - The share judges a match against the task: a file must hold about a
//     quarter of what the task says, one of four equally informative words,
//     so one common word among the task's rarer ones is not enough (the
//     seed's rule, "shares a word longer than three letters", admitted
//     nearly every file through one such word).
//   - The weight keeps the share from setting a bar no file could clear
//     when the task holds many informative words: IDFs add as the chances of
//     independent words multiply, and 4.6 is about ln 100, the IDF of a
//     word one chunk in a hundred holds. One word that rare (or two held by
//     one chunk in ten each) is unlikely to be shared by chance. A small
//     store cannot reach it (with fewer than about 150 chunks no single
//     word weighs 4.6), and there the share decides.
//
// Term frequency and length decide nothing here, so that a common word
// repeated five times does not stand in for the task's other words; they
// rank: the matching files are included by BM25 score, best first, with
// the task's words each matched (Section.MatchedTerms, Section.Score).
// Length is normalized over the request's contextual files, the documents
// being ranked. A file left out is listed with ReasonNoMatch, the words it
// shares, its share of the task's weight and its BM25 score. A long task
// (more words than the search's MaxQueryTerms) is matched by the key terms
// the chunk search reduced it to (lexical.Index.KeyTerms), so a pasted page
// does not match every file; a warning lists them (in vector mode the
// search reduces nothing and the whole task is matched). While the search
// index cannot give its statistics (it holds no chunks yet, or fails),
// IDF is computed over the request's contextual files instead and
// Result.Warnings says so: with few files it cannot tell common words from
// rare ones, and the share alone decides.
//
// # Recall for a session
//
// Index/session recalls memory through Build with three more options. Extra
// sections (KindGoals, KindDigest: what earlier sessions left open and
// their digests) follow the always files under their own group headers,
// whole or omitted like any section. SkipAlways leaves the always files out
// when a session was given them at its start. MatchChunks holds the search
// chunks to the contextual files' rule, so that a prompt adds only what it
// substantively matches, or nothing: there, the prompt's words no document
// holds count in its weight too (as if one document held each), since a
// prompt about something the memory lacks should match nothing, where the
// task of BuildContext only picks among files. Exclude drops the results
// of items outside the caller's scope (another project's sessions), and
// StatsExcept leaves a directory's chunks out of the term statistics (the
// asking session's own events, which echo its prompt).
//
// # Limits
//
// Build reuses the search engine's limits (search.Limits): the budget is
// at most MaxTokenBudget (default 100,000; 0 means DefaultBudget, 4,000),
// the task at most MaxQueryBytes (1 MiB) and the roots at most
// MaxFilterValues (64). Over a bound Build returns a *LimitError (it
// matches vfs.ErrInvalid) with a hint; a bad root ref is a *vfs.Error. The
// chunk search applies the engine's own limits (a long task is searched by
// its key terms). Listing the roots costs a read of every item below them,
// so roots should hold context files, not a large corpus. Build stops with
// ctx's error once ctx ends.
package assemble
