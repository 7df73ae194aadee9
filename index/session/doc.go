// Package session keeps what agents did, session by session (issue 27):
// the prompts, tool uses, decisions, errors, notes and file changes a host
// reports (Claude Code's hooks, through `ctxd hook claude-code`, or any
// harness through the API), a digest of each session, and the recall of
// what a new session of the same project should know.
//
// # Sessions are items
//
// Everything is an item of the store on the session drive, so every rule
// of items holds for sessions without code of their own: history,
// revert, tokens limited to drives and paths, search in every leg,
// backups, and any store backend:
//
//	session:/PROJECT/STARTED-ID/session.md            the record: frontmatter only
//	session:/PROJECT/STARTED-ID/events/TIME-N-KIND-R.md   one event each
//	session:/PROJECT/STARTED-ID/digest.md             the digest
//
// STARTED is the session's start (UTC, to the second), so a project's
// directories sort by start and "the last sessions" is a walk of names,
// not of records; ID is the host's session id. A record has no body, so it
// makes no chunk and no search returns it. An event's frontmatter (one line
// of JSON, which is YAML too) holds its kind, tool, refs and whether its
// text was cut; its body is the text,
// which is what is chunked, embedded and searched. Events carry the tags
// "event" and "kind:KIND" (and "tasks" on a tool use holding a task list),
// digests "digest" and "kind:summary", so a
// search filters kinds inside every leg (lexical.Filter.AnyTags), and a
// time range by the items' times (lexical.Filter.After, Before). An event's
// time is when the daemon stored it.
//
// Starting a session whose id the project already has returns it (a host
// starts its session again on resume, clear and compact): the lookup walks
// the project's directory names, and is remembered per process. Session
// creation is serialised within the process, so one id gets one
// directory.
//
// # Bounds
//
// An event's text is cut at Options.MaxEventBytes (default 8 KiB) at a rune
// boundary, with "…[cut N bytes]", never refused; invalid UTF-8 and NUL
// become U+FFFD, and Options.Redact removes secrets before anything is
// stored. One Append takes 1 to MaxEventsPerAppend events; an event at most
// MaxEventRefs refs of MaxRefBytes and a tool name of MaxToolBytes.
//
// # Digests
//
// A digest is extractive (no model): when and by whom, the counts by kind,
// then bounded lists of the prompts, decisions and notes, errors (with
// their refs), files changed and commands run (with counts), and the open
// goals: the unchecked task-list lines ("- [ ] ...") of the latest tool use
// that holds a task list, which a host's TodoWrite records. It reads at
// most MaxDigestEvents events, the latest. With a Summarizer (the
// OpenAI-compatible enricher) the model rewrites it from the extractive
// digest and the events' text, bounded both ways, and on any failure the
// extractive digest stays. A hook must not wait for a model, so End writes
// the extractive digest at once and queues the model's for Run, unless the
// caller waits for it.
//
// # Recall
//
// Recall builds on index/assemble's Build. At a session's start: the
// always-loaded context files, the open goals of the latest earlier
// session, and the digests of the last earlier sessions, within the
// budget, each whole or left out. For a prompt: the contextual files and
// the memory chunks the prompt matches by BuildContext's relevance rule
// (assemble.Request.MatchChunks), other projects' sessions and the asking
// session's own events left out; nothing when nothing matches. The asking
// session's events do not count in the term statistics either
// (assemble.Request.StatsExcept): its recorded prompt would otherwise make
// every word of the prompt look common, depending on whether the record
// was indexed before the recall ran.
//
// # Retention
//
// Run expires events older than their project's TTL (Options.EventTTL, 30
// days, or Options.ProjectTTL) every hour; a session whose events all
// expire first gets a digest covering them. Records and digests stay.
// Expired events are deleted through the store, so its history keeps them
// for history_min_age like any deleted item.
package session
