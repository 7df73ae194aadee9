// Package standing matches the store's changes against standing queries
// (subscriptions) and pushes each item that newly matches, with the change
// that caused it.
//
// # Matching
//
// A Hub follows the search engine: once the engine has applied outbox
// entries to both indexes (search.Engine.Applied, so a subscriber that
// searches next finds the item), the hub reads those entries and the
// changed items' chunks from the store and matches them against every
// registered query at once. It never sits in the engine's path: it runs on
// its own goroutine, reads what it needs itself, and holds the outbox
// entries it has not matched (search.Engine.HoldOutbox), so falling behind
// costs nothing but delay and loses nothing. With no query registered it
// reads nothing.
//
// The lexical leg is an inverted match: every query text is analysed
// exactly as the lexical index analyses a query (lexical.QueryTerms: the
// English analyzer, stop words dropped, Porter stemmed), and a posting list
// per term names the query texts holding it. A changed chunk's text,
// heading and its item's title and description are scanned once for the
// registered terms (lexical.TermSet: only words beginning like some term
// are analysed), and each term found adds its weight to the query texts
// of its postings. A term weighs its BM25 IDF in the lexical index (read
// when a query is registered and every minute), so a chunk's lexical score
// is the share of the query's term weight it holds, in [0, 1]: 1 means
// every term. The vector leg (VECTOR and HYBRID modes) embeds each query
// text once, at registration, and scores a chunk by the cosine of its
// vector with each query vector: a scan of the query vectors per changed
// chunk vector, as the vector index scans its rows. A chunk's score is its
// best leg; it matches when that reaches MinScore (by default 1 for the
// lexical leg, every term, and 0.5 for the vector leg). An item's best
// matching chunk is pushed, as a search result.
//
// # Delivery
//
// A match is per item version (the item's UpdatedAt): an item matched by
// the lexical leg when written and again by the vector leg once embedded
// is pushed once; an edit that still matches is pushed again. Each stream
// has a bounded queue: when it is full the stream ends with ErrCutOff and
// the hub goes on. A push carries its outbox sequence (Token); a stream
// resumed after a sequence first replays, for that subscription alone and
// in bounded batches, the outbox entries after it that the store still
// retains (the hub keeps Options.Retain entries past what it matched),
// with a Gap for those already trimmed, and then joins the live pushes,
// which queued meanwhile. Delivery is at least once: a push may repeat
// after a resume, never go missing while the outbox holds it.
//
// # Durable subscriptions
//
// A durable subscription (durable.go) is stored in the store with its
// creator and the creator's access then, and matched whether or not anyone
// listens: its matches go to its inbox in the store (vfs inboxes: bounded,
// ordered, overflow counted), keyed by change and item so that replicas of
// a shared store, which each match every change, add each once. The hub
// records how far it matched them (a record beside them) and holds the
// outbox from there, so that after a restart it matches what changed while
// it was down before joining the present. Replicas reload the definitions
// every 10 s.
//
// # Replicas
//
// On a shared store an outbox entry names the replica that wrote it; a
// push says so (Change.ReplicaID, Remote). Every replica's engine applies
// every change, so a stream on any replica is told of writes made on all.
//
// Matches of an item read its current state: an item changed twice before
// the hub reads it is matched once, as it is now. The change is described
// by the item's latest history revision.
package standing
