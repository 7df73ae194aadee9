/**
 * The session helpers of CtxdClient: sessions, their events, digests and
 * recall, over SessionService.
 *
 * A session is one agent's work on one project; its events (prompts, tool
 * uses, decisions, errors, notes, file changes, summaries) are items of the
 * `session` drive, searched with the same engine as every item, digested
 * when the session ends and recalled when the next one starts.
 */
import type { Client } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";

import type { SearchMode } from "./gen/ctxd/v1/search_pb.js";
import {
  type AppendEventsResponse,
  type EndSessionResponse,
  type GetSessionResponse,
  type RecallResponse,
  type SearchEventsResponse,
  type Session,
  type SessionDigest,
  SessionDigestSchema,
  SessionEventKind,
  type SessionService,
  type StartSessionResponse,
} from "./gen/ctxd/v1/session_pb.js";

/** An event kind's name, as the daemon and the CLI spell it. */
export type EventKindName = "prompt" | "tool_use" | "decision" | "error" | "note" | "file_change" | "summary";

/** An event kind: its name ("decision") or the enum (SessionEventKind.DECISION). */
export type EventKindLike = EventKindName | SessionEventKind;

/** An event to append; the daemon sets its ref and time. */
export interface EventInput {
  kind: EventKindLike;
  /** What happened; text over the daemon's limits.max_event_bytes (8 KiB) is cut with a marker. */
  text: string;
  /** The tool's name, for tool uses and errors. */
  tool?: string;
  /** Refs or file paths the event is about (a file change's files). */
  refs?: string[];
}

/** Options of appendEvents: where the events go, a session or the project's latest open one. */
export interface AppendEventsOptions {
  /** The session; unset: the project's most recently started open session, or a new one. */
  sessionId?: string;
  /** The project; unset derives it from cwd (the base name of its repository root). */
  project?: string;
  /** The working directory recorded and the project derived from; default process.cwd(), "" sends none. */
  cwd?: string;
}

/** Options of startSession. */
export interface StartSessionOptions {
  /** The session's id (the host's own where it has one); unset generates one. */
  id?: string;
  /** As in AppendEventsOptions. */
  project?: string;
  /** Who works in it; default the caller's token name. */
  actor?: string;
  /** As in AppendEventsOptions. */
  cwd?: string;
}

/** Options of remember: where the event goes, its kind (default "note"), tool and refs. */
export interface RememberOptions extends AppendEventsOptions {
  kind?: EventKindLike;
  tool?: string;
  refs?: string[];
}

/** Options of endSession and digestSession. */
export interface DigestOptions {
  /** The session's project; unset finds the id in any project. */
  project?: string;
  /**
   * With an enricher configured on the daemon, wait for its digest (within
   * the call's deadline); otherwise it replaces the extractive one in the
   * background.
   */
  waitForEnricher?: boolean;
}

/** Options of getSession. */
export interface GetSessionOptions {
  /** The session's project; unset finds the id in any project. */
  project?: string;
  /** Events per page (default 100). */
  limit?: number;
  /** nextPageToken of the previous page. */
  pageToken?: string;
}

/** Options of listSessions. */
export interface ListSessionsOptions {
  /** Only this project's sessions; unset: every project's. */
  project?: string;
  /** Sessions at most (default 20). */
  limit?: number;
  /** Only sessions started at or after this time. */
  since?: Date;
}

/** Options of searchEvents; the filters are AND-ed and run inside every leg. */
export interface SearchEventsOptions {
  project?: string;
  sessionIds?: string[];
  /** Only events of these kinds; "summary" includes digests. */
  kinds?: EventKindLike[];
  /** Only events at or after this time. */
  after?: Date;
  /** Only events before this time. */
  before?: Date;
  /** Events at most, over all sessions (default 10). */
  limit?: number;
  /** Default hybrid. */
  mode?: SearchMode;
}

/** Options of recall. */
export interface RecallOptions {
  /** The user's prompt; unset: what a session's start should know. */
  prompt?: string;
  /** As in AppendEventsOptions. */
  project?: string;
  /** As in AppendEventsOptions. */
  cwd?: string;
  /** The asking session, whose own events are not recalled. */
  sessionId?: string;
  /** Token budget (default 2000). */
  budget?: number;
  /** Earlier sessions' digests at a start (default 3, at most 20). */
  digests?: number;
  /** Context roots whose files take part; unset: the daemon's. */
  roots?: string[];
}

/** The session helpers of CtxdClient. */
export interface SessionMethods {
  /**
   * Starts a session, or resolves to the one with that id unchanged
   * (`created` false: a host starts its session again on resume).
   */
  startSession(options?: StartSessionOptions): Promise<StartSessionResponse>;
  /**
   * Appends 1 to 256 events to a session in one transaction, starting it
   * when absent; `events` are as stored (ref, time, and `truncated` when a
   * text was cut).
   */
  appendEvents(events: EventInput[], options?: AppendEventsOptions): Promise<AppendEventsResponse>;
  /** Records one event, a note by default (`{ kind: "decision" }` for a decision). */
  remember(text: string, options?: RememberOptions): Promise<AppendEventsResponse>;
  /**
   * Ends a session and writes its digest: prompts, decisions and notes,
   * errors, files changed, commands run and open goals. Ending an ended
   * session writes the digest again.
   */
  endSession(sessionId: string, options?: DigestOptions): Promise<EndSessionResponse>;
  /** Writes a session's digest without ending it, and resolves to it. */
  digestSession(sessionId: string, options?: DigestOptions): Promise<SessionDigest>;
  /** A session, a page of its events (oldest first) and its digest's markdown. */
  getSession(sessionId: string, options?: GetSessionOptions): Promise<GetSessionResponse>;
  /** Sessions, most recently started first. */
  listSessions(options?: ListSessionsOptions): Promise<Session[]>;
  /** Searches events and digests; `sessions` groups the hits by session, the best first. */
  searchEvents(query: string, options?: SearchEventsOptions): Promise<SearchEventsResponse>;
  /**
   * What an agent should know within a budget: without a prompt the
   * always-loaded context files, open goals and the last sessions' digests;
   * with one the contextual files and memory that match it, or nothing
   * (`markdown` empty).
   */
  recall(options?: RecallOptions): Promise<RecallResponse>;
}

/** The enum of a kind; a name is matched ignoring case, "-" standing for "_". */
export function eventKind(kind: EventKindLike): SessionEventKind {
  if (typeof kind === "number") {
    return kind;
  }
  const name = String(kind).trim().toUpperCase().replaceAll("-", "_");
  const value = (SessionEventKind as unknown as Record<string, unknown>)[name];
  if (typeof value !== "number" || value === SessionEventKind.UNSPECIFIED) {
    throw new TypeError(
      `unknown event kind ${JSON.stringify(kind)}: use prompt, tool_use, decision, error, note, file_change or summary`,
    );
  }
  return value;
}

/** cwd, or this process's working directory (as the CLI sends it). */
function workingDir(cwd: string | undefined): string {
  if (cwd !== undefined) {
    return cwd;
  }
  try {
    return process.cwd();
  } catch {
    return ""; // removed under us: the daemon uses its default
  }
}

function event(e: EventInput) {
  return { kind: eventKind(e.kind), text: e.text, tool: e.tool, refs: e.refs };
}

/** The session helpers over a SessionService client. */
export function sessionMethods(sessions: Client<typeof SessionService>): SessionMethods {
  return {
    startSession: async (o = {}) => sessions.startSession({ ...o, cwd: workingDir(o.cwd) }),
    appendEvents: async (events, o = {}) =>
      sessions.appendEvents({ ...o, cwd: workingDir(o.cwd), events: events.map(event) }),
    remember: async (text, o = {}) =>
      sessions.appendEvents({
        sessionId: o.sessionId,
        project: o.project,
        cwd: workingDir(o.cwd),
        events: [event({ kind: o.kind ?? "note", text, tool: o.tool, refs: o.refs })],
      }),
    endSession: (sessionId, o = {}) => sessions.endSession({ ...o, sessionId }),
    digestSession: async (sessionId, o = {}) =>
      (await sessions.digestSession({ ...o, sessionId })).digest ?? create(SessionDigestSchema),
    getSession: (sessionId, o = {}) => sessions.getSession({ ...o, sessionId }),
    listSessions: async (o = {}) =>
      (
        await sessions.listSessions({
          project: o.project,
          limit: o.limit,
          since: o.since && timestampFromDate(o.since),
        })
      ).sessions,
    searchEvents: async (query, o = {}) =>
      sessions.searchEvents({
        query,
        project: o.project,
        sessionIds: o.sessionIds,
        kinds: o.kinds?.map(eventKind),
        after: o.after && timestampFromDate(o.after),
        before: o.before && timestampFromDate(o.before),
        limit: o.limit,
        mode: o.mode,
      }),
    recall: async (o = {}) => sessions.recall({ ...o, cwd: workingDir(o.cwd) }),
  };
}
