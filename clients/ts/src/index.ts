/**
 * TypeScript client for ctxd, a local memory layer for AI agents.
 *
 * `createClient()` connects to the daemon's unix socket (or to a TCP address)
 * and returns typed Connect clients for every service. Calls that fail throw
 * CtxdError, which carries the daemon's structured error detail.
 */
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

import {
  type Client,
  type Interceptor,
  type Transport,
  createClient as createConnectClient,
} from "@connectrpc/connect";
import { Http2SessionManager, createGrpcTransport } from "@connectrpc/connect-node";
import type { DescService, MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";

import { AdminService, type PruneResponse } from "./gen/ctxd/v1/admin_pb.js";
import {
  type BuildContextRequestSchema,
  type BuildContextResponse,
  type CompactRequestSchema,
  type CompactResponse,
  ContextService,
  type InitResponse,
  type UpdateResponse,
} from "./gen/ctxd/v1/context_pb.js";
import { IngestService } from "./gen/ctxd/v1/ingest_pb.js";
import {
  type FindSimilarRequestSchema,
  type FindSimilarResponse,
  SearchService,
} from "./gen/ctxd/v1/search_pb.js";
import { SessionService } from "./gen/ctxd/v1/session_pb.js";
import { ToolService } from "./gen/ctxd/v1/tools_pb.js";
import {
  type LogResponse,
  type ReadRevisionResponse,
  type RevertResponse,
  type Revision,
  VfsService,
  type WriteRequestSchema,
  type WriteResponse,
} from "./gen/ctxd/v1/vfs_pb.js";
import { toCtxdError } from "./errors.js";
import { type SessionMethods, sessionMethods } from "./sessions.js";
import { WatchService } from "./gen/ctxd/v1/watch_pb.js";
import { type WatchMethods, watchMethods } from "./watches.js";
import { SubscriptionService } from "./gen/ctxd/v1/subscription_pb.js";
import { type SubscriptionMethods, subscriptionMethods } from "./subscriptions.js";

export { CtxdError, codeName, toCtxdError } from "./errors.js";
export { Code, ConnectError } from "@connectrpc/connect";
export * from "./gen/ctxd/v1/admin_pb.js";
export * from "./gen/ctxd/v1/context_pb.js";
export * from "./gen/ctxd/v1/errors_pb.js";
export * from "./gen/ctxd/v1/ingest_pb.js";
export * from "./gen/ctxd/v1/search_pb.js";
export * from "./gen/ctxd/v1/session_pb.js";
export * from "./gen/ctxd/v1/subscription_pb.js";
export * from "./gen/ctxd/v1/tools_pb.js";
export * from "./gen/ctxd/v1/types_pb.js";
export * from "./gen/ctxd/v1/vfs_pb.js";
export * from "./gen/ctxd/v1/watch_pb.js";
export { type AddWatchOptions, type WatchMethods } from "./watches.js";
export {
  type AppendEventsOptions,
  type DigestOptions,
  type EventInput,
  type EventKindLike,
  type EventKindName,
  type GetSessionOptions,
  type ListSessionsOptions,
  type RecallOptions,
  type RememberOptions,
  type SearchEventsOptions,
  type SessionMethods,
  type StartSessionOptions,
  eventKind,
} from "./sessions.js";
export type { StandingQueryOptions, SubscribeOptions, SubscriptionMethods } from "./subscriptions.js";

/** Options of createClient. */
export interface ClientOptions {
  /**
   * The daemon's unix socket. Default: $CTXD_SOCKET, else
   * $XDG_RUNTIME_DIR/ctxd/ctxd.sock (see defaultSocketPath). Ignored when
   * `address` is set.
   */
  socketPath?: string;
  /**
   * A TCP address instead of the socket: "127.0.0.1:7077", or a URL
   * ("http://127.0.0.1:7077"). The daemon requires a token there.
   */
  address?: string;
  /**
   * Bearer token, sent as `authorization: Bearer <token>` on every call.
   * Default: $CTXD_TOKEN (needed on the socket when the daemon sets socket_auth).
   */
  token?: string;
  /**
   * Extra gRPC metadata sent with every call, for example
   * `{ "ctxd-agent": "researcher" }` to act as an agent of that name.
   */
  metadata?: Record<string, string>;
  /** Default deadline of every call in milliseconds; none when unset. */
  timeoutMs?: number;
  /** Extra Connect interceptors, run inside the one that adds the token and metadata. */
  interceptors?: Interceptor[];
}

/**
 * The services of a ctxd daemon, each a typed Connect client, and helpers
 * over them (the session helpers are SessionMethods').
 */
export interface CtxdClient extends SessionMethods, WatchMethods, SubscriptionMethods {
  /** The agent's filesystem: write, read, tree, list, edit, delete, ... */
  vfs: Client<typeof VfsService>;
  /** Hybrid search over stored items. */
  search: Client<typeof SearchService>;
  /** Ingest of files, trees and URLs (server-streaming). */
  ingest: Client<typeof IngestService>;
  /** Daemon status, reindex, doctor, prune. */
  admin: Client<typeof AdminService>;
  /** Persistent agent context: init, update, buildContext, compact. */
  context: Client<typeof ContextService>;
  /** Sessions and their events (see the session helpers: startSession, appendEvents, ...). */
  sessions: Client<typeof SessionService>;
  /** Standing queries (see subscribe(), createSubscription(), readSubscription(), ...). */
  subscriptions: Client<typeof SubscriptionService>;
  /** The agent tools, for tool loops: listTools, callTool (see tools() and callTool()). */
  toolService: Client<typeof ToolService>;
  /** Watched directory trees (see the watch helpers: addWatch, listWatches, removeWatch). */
  watches: Client<typeof WatchService>;
  /** The underlying gRPC transport, for createClient() of other services. */
  transport: Transport;
  /** Closes the HTTP/2 connection; the clients must not be used afterwards. */
  close(): void;

  /**
   * The context for one task within a token budget (default 4000): every
   * `loading: always` file, the `loading: contextual` files the task matches,
   * then search chunks (mode, limit and filter apply to these). `markdown`
   * is ready for a prompt; `omitted` says what did not fit and why.
   */
  buildContext(task: string, options?: BuildContextOptions): Promise<BuildContextResponse>;
  /**
   * Stored items that are near-duplicates of the item at a ref (never
   * returned itself) or of `{ text }` (chunked and embedded the way a written
   * item would be), most similar first: each with the best chunk pair's
   * cosine `similarity` (at least `threshold`, default 0.9) and `coverage`,
   * the share of the target's chunks it matches (1: all of it is stored).
   */
  findSimilar(target: string | { text: string }, options?: FindSimilarOptions): Promise<FindSimilarResponse>;
  /**
   * Replaces a context file's body, keeping its frontmatter byte for byte.
   * An agent token may update only files with `agent-modification: true`
   * (CtxdError type "READ_ONLY" otherwise).
   */
  updateContext(ref: string, body: string, options?: { expectedContentHash?: string }): Promise<UpdateResponse>;
  /**
   * Creates soul.md, beliefs.md, goals.md and capabilities.md under root
   * (default: the daemon's first context root, "self:/") where absent.
   */
  initContext(root?: string): Promise<InitResponse>;
  /**
   * Writes many items in one transaction, all or none, in order (a later
   * item may overwrite an earlier one); each item is what `vfs.write` takes.
   * Resolves to their results in that order, each without `tree`. At most
   * the daemon's limits.max_batch_items (default 1000) items, else a
   * CtxdError of type "INVALID_ARGUMENT"; when an item fails nothing is
   * written and the error's message names it: `items[2] (agent:/b.md): ...`.
   */
  writeBatch(items: WriteItem[]): Promise<WriteResponse[]>;
  /** An item's revisions, newest first; a deleted item's last ref works too. */
  history(ref: string, options?: { limit?: number; beforeRev?: bigint | number }): Promise<Revision[]>;
  /** One revision and its content (`data` with raw). */
  readRevision(ref: string, rev: bigint | number, options?: { raw?: boolean }): Promise<ReadRevisionResponse>;
  /** Makes revision rev current again; restores a deleted item at its ref. */
  revert(ref: string, rev: bigint | number): Promise<RevertResponse>;
  /**
   * Deleted items below a directory (all when empty), each as its deletion
   * revision: revert(r.ref, r.rev - 1n) restores one.
   */
  deleted(ref?: string, options?: { limit?: number }): Promise<Revision[]>;
  /** Revisions across the store, newest first: who changed what, and when. */
  log(options?: LogOptions): Promise<LogResponse>;
  /**
   * Deletes (lists, with dryRun) the items no search returned and nobody
   * changed for unretrievedMs milliseconds (at least a day), oldest activity
   * first: never context files, items with importance set, sessions'
   * records and digests, or directories. Each delete stays in history:
   * revert(i.ref, i.deleteRev - 1n) restores one. Needs the admin scope.
   */
  prune(unretrievedMs: number, options?: PruneOptions): Promise<PruneResponse>;
  /**
   * Rewrites an oversized memory file (over minTokens model tokens, default
   * 8000; a smaller one is left alone, `compacted` false) shorter, keeping
   * its frontmatter: repeated entries dropped, headings and the newest
   * entries of each section kept (or the daemon's enricher writes it).
   * revert(ref, r.previousRev) undoes it; dryRun writes nothing.
   */
  compact(ref: string, options?: CompactOptions): Promise<CompactResponse>;

  /**
   * The agent tools of a profile this client's token may use (context_read,
   * context_write, context_search, ...), ready to pass to a provider's API:
   * "openai" (Chat Completions `tools`), "anthropic" (Messages API `tools`)
   * or "mcp" (the default). The profile is "core" (the default: the seeds'
   * seven tools and remember, within 4,000 tokens), "read" (every tool that
   * changes nothing) or "all"; callTool runs a tool of any profile. They are
   * the tools of `ctxd mcp` and `ctxd tools`: one definition, in the daemon.
   */
  tools(format: "openai", profile?: ToolProfile): Promise<OpenAITool[]>;
  tools(format: "anthropic", profile?: ToolProfile): Promise<AnthropicTool[]>;
  tools(format?: "mcp", profile?: ToolProfile): Promise<McpTool[]>;
  /**
   * Runs the tool a model called with its arguments: an object, or the JSON
   * text the model wrote (OpenAI's `function.arguments`). A failing tool is a
   * result with `isError`, not a rejection, so that the loop hands it to the
   * model: its content is `{"is_error": true, "error_type": "not_found",
   * "message": ..., "next_action_hint": ...}`. Only failures of the call itself
   * reject with CtxdError (no daemon, a missing token, the deadline).
   */
  callTool(name: string, args?: Record<string, unknown> | string): Promise<ToolResult>;
}

/** Which tools tools() lists: see tools(). */
export type ToolProfile = "core" | "read" | "all";

/** A JSON Schema, as the tools' input schemas are. */
export type JsonSchema = { type: "object"; properties?: Record<string, unknown>; required?: string[] } & Record<
  string,
  unknown
>;

/** A tool in the OpenAI Chat Completions format. */
export interface OpenAITool {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema };
}

/** A tool in the Anthropic Messages API format. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

/** A tool as MCP's tools/list has it. */
export interface McpTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: {
    title?: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
}

/** What a tool call returned: hand `content` to the model as the tool's output. */
export interface ToolResult {
  /** JSON text: the tool's output, or the error when isError. */
  content: string;
  /** True when the tool failed. */
  isError: boolean;
  /** content, parsed. */
  json(): Record<string, unknown>;
}

/** An item of writeBatch: the fields of a WriteRequest, as `vfs.write` takes them. */
export type WriteItem = Omit<MessageInitShape<typeof WriteRequestSchema>, "$typeName">;

/** Options of findSimilar: the FindSimilarRequest fields besides the target. */
export type FindSimilarOptions = Omit<MessageInitShape<typeof FindSimilarRequestSchema>, "target" | "$typeName">;

/** Options of buildContext: the BuildContextRequest fields besides the task. */
export type BuildContextOptions = Omit<MessageInitShape<typeof BuildContextRequestSchema>, "task" | "$typeName">;

/** Options of prune. */
export interface PruneOptions {
  /** List without deleting. */
  dryRun?: boolean;
  /** Only items under these directory refs ("agent:/scratch"); unset: the whole store. */
  paths?: string[];
  /** Items at most (default 1000); `more` says when more qualified. */
  limit?: number;
}

/** Options of compact: the CompactRequest fields besides the ref. */
export type CompactOptions = Omit<MessageInitShape<typeof CompactRequestSchema>, "ref" | "$typeName">;

/** Options of log. */
export interface LogOptions {
  /** Only this actor's revisions: a token name, or "owner". */
  actor?: string;
  /** Only revisions made at or after this time. */
  since?: Date;
  /** Revisions per page (default 50, at most 1000). */
  limit?: number;
  /** next_page_token of the previous page. */
  pageToken?: string;
}

/**
 * The daemon's default socket: $CTXD_SOCKET, else
 * $XDG_RUNTIME_DIR/ctxd/ctxd.sock, else $TMPDIR/ctxd-<uid>/ctxd/ctxd.sock
 * (TMPDIR defaulting to /tmp), the same fallback the daemon uses.
 */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CTXD_SOCKET) {
    return env.CTXD_SOCKET;
  }
  let runtime = env.XDG_RUNTIME_DIR;
  if (!runtime) {
    const uid = typeof process.getuid === "function" ? process.getuid() : os.userInfo().uid;
    runtime = path.join(env.TMPDIR || "/tmp", `ctxd-${uid}`);
  }
  return path.join(runtime, "ctxd", "ctxd.sock");
}

function withHeaders(headers: Record<string, string>): Interceptor {
  return (next) => async (req) => {
    for (const [k, v] of Object.entries(headers)) {
      req.header.set(k, v);
    }
    return next(req);
  };
}

/**
 * Wraps every method of a Connect client so that failures reject (or, for
 * streams, throw from the iterator) with CtxdError instead of ConnectError.
 */
function withCtxdErrors<S extends DescService>(client: Client<S>): Client<S> {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(client as Record<string, unknown>)) {
    if (typeof fn !== "function") {
      wrapped[name] = fn;
      continue;
    }
    wrapped[name] = (...args: unknown[]) => {
      let result: unknown;
      try {
        result = (fn as (...a: unknown[]) => unknown).apply(client, args);
      } catch (e) {
        throw toCtxdError(e);
      }
      if (result instanceof Promise) {
        return result.catch((e: unknown) => {
          throw toCtxdError(e);
        });
      }
      if (result !== null && typeof result === "object" && Symbol.asyncIterator in result) {
        return translateIterable(result as AsyncIterable<unknown>);
      }
      return result;
    };
  }
  return wrapped as Client<S>;
}

async function* translateIterable<T>(it: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* it;
  } catch (e) {
    throw toCtxdError(e);
  }
}

/**
 * Connects to a ctxd daemon over gRPC (HTTP/2): the unix socket by default,
 * or `address` over TCP. The connection is made lazily on the first call.
 *
 * ```ts
 * const ctxd = createClient();
 * await ctxd.vfs.write({ ref: "agent:/notes/a.md", body: { case: "content", value: "hi\n" } });
 * const { content } = await ctxd.vfs.read({ ref: "agent:/notes/a.md" });
 * ```
 */
export function createClient(options: ClientOptions = {}): CtxdClient {
  let baseUrl: string;
  let nodeOptions: { createConnection?: () => net.Socket } = {};
  if (options.address) {
    baseUrl = /^https?:\/\//.test(options.address) ? options.address : `http://${options.address}`;
  } else {
    const socketPath = options.socketPath || defaultSocketPath();
    baseUrl = "http://localhost";
    nodeOptions = { createConnection: () => net.connect(socketPath) };
  }
  const sessionManager = new Http2SessionManager(baseUrl, {}, nodeOptions);
  const headers = { ...options.metadata };
  const token = options.token || process.env.CTXD_TOKEN;
  if (token) {
    headers.authorization = `Bearer ${token}`;
  }
  const interceptors: Interceptor[] = [withHeaders(headers)];
  interceptors.push(...(options.interceptors ?? []));
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager,
    interceptors,
    defaultTimeoutMs: options.timeoutMs,
  });
  const vfs = withCtxdErrors(createConnectClient(VfsService, transport));
  const context = withCtxdErrors(createConnectClient(ContextService, transport));
  const toolService = withCtxdErrors(createConnectClient(ToolService, transport));
  const search = withCtxdErrors(createConnectClient(SearchService, transport));
  const admin = withCtxdErrors(createConnectClient(AdminService, transport));
  const sessions = withCtxdErrors(createConnectClient(SessionService, transport));
  const watches = withCtxdErrors(createConnectClient(WatchService, transport));
  const subscriptions = withCtxdErrors(createConnectClient(SubscriptionService, transport));
  return {
    vfs,
    search,
    ingest: withCtxdErrors(createConnectClient(IngestService, transport)),
    admin,
    context,
    sessions,
    subscriptions,
    toolService,
    watches,
    transport,
    close: () => sessionManager.abort(),
    buildContext: (task, options = {}) => context.buildContext({ ...options, task }),
    findSimilar: (target, options = {}) =>
      search.findSimilar({
        ...options,
        target: typeof target === "string" ? { case: "ref", value: target } : { case: "text", value: target.text },
      }),
    updateContext: (ref, body, options = {}) => context.update({ ref, body, ...options }),
    initContext: (root = "") => context.init({ root }),
    writeBatch: async (items) => (await vfs.writeBatch({ items })).results,
    history: async (ref, options = {}) =>
      (await vfs.history({ ref, limit: options.limit, beforeRev: BigInt(options.beforeRev ?? 0) })).revisions,
    readRevision: (ref, rev, options = {}) => vfs.readRevision({ ref, rev: BigInt(rev), raw: options.raw }),
    revert: (ref, rev) => vfs.revert({ ref, rev: BigInt(rev) }),
    deleted: async (ref = "", options = {}) => (await vfs.listDeleted({ ref, limit: options.limit })).revisions,
    log: (options = {}) =>
      vfs.log({
        actor: options.actor,
        since: options.since && timestampFromDate(options.since),
        limit: options.limit,
        pageToken: options.pageToken,
      }),
    prune: async (unretrievedMs, options = {}) => {
      if (!Number.isFinite(unretrievedMs) || unretrievedMs < 0) {
        throw new TypeError(`unretrievedMs must be a duration in milliseconds, not ${unretrievedMs}`);
      }
      return admin.prune({
        unretrievedSeconds: BigInt(Math.floor(unretrievedMs / 1000)),
        dryRun: options.dryRun,
        pathPrefixes: options.paths,
        limit: options.limit,
      });
    },
    compact: (ref, options = {}) => context.compact({ ...options, ref }),
    ...sessionMethods(sessions),
    ...watchMethods(watches),
    ...subscriptionMethods(subscriptions),
    tools: (async (format = "mcp", profile: ToolProfile = "core") =>
      JSON.parse((await toolService.listTools({ format, profile })).toolsJson)) as CtxdClient["tools"],
    callTool: async (name, args = "") => {
      const { content, isError } = await toolService.callTool({
        name,
        args: { case: "argumentsJson", value: typeof args === "string" ? args : JSON.stringify(args) },
      });
      return { content, isError, json: () => JSON.parse(content) };
    },
  };
}
