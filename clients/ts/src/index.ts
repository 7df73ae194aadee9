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
import type { DescService } from "@bufbuild/protobuf";

import { AdminService } from "./gen/ctxd/v1/admin_pb.js";
import { IngestService } from "./gen/ctxd/v1/ingest_pb.js";
import { SearchService } from "./gen/ctxd/v1/search_pb.js";
import { VfsService } from "./gen/ctxd/v1/vfs_pb.js";
import { toCtxdError } from "./errors.js";

export { CtxdError, codeName, toCtxdError } from "./errors.js";
export { Code, ConnectError } from "@connectrpc/connect";
export * from "./gen/ctxd/v1/admin_pb.js";
export * from "./gen/ctxd/v1/errors_pb.js";
export * from "./gen/ctxd/v1/ingest_pb.js";
export * from "./gen/ctxd/v1/search_pb.js";
export * from "./gen/ctxd/v1/types_pb.js";
export * from "./gen/ctxd/v1/vfs_pb.js";

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
  /** Bearer token, sent as `authorization: Bearer <token>` on every call. */
  token?: string;
  /** Default deadline of every call in milliseconds; none when unset. */
  timeoutMs?: number;
  /** Extra Connect interceptors, run inside the token interceptor. */
  interceptors?: Interceptor[];
}

/** The services of a ctxd daemon, each a typed Connect client. */
export interface CtxdClient {
  /** The agent's filesystem: write, read, tree, list, edit, delete, ... */
  vfs: Client<typeof VfsService>;
  /** Hybrid search over stored items. */
  search: Client<typeof SearchService>;
  /** Ingest of files, trees and URLs (server-streaming). */
  ingest: Client<typeof IngestService>;
  /** Daemon status. */
  admin: Client<typeof AdminService>;
  /** The underlying gRPC transport, for createClient() of other services. */
  transport: Transport;
  /** Closes the HTTP/2 connection; the clients must not be used afterwards. */
  close(): void;
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

function bearer(token: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${token}`);
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
  const interceptors: Interceptor[] = [];
  if (options.token) {
    interceptors.push(bearer(options.token));
  }
  interceptors.push(...(options.interceptors ?? []));
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager,
    interceptors,
    defaultTimeoutMs: options.timeoutMs,
  });
  return {
    vfs: withCtxdErrors(createConnectClient(VfsService, transport)),
    search: withCtxdErrors(createConnectClient(SearchService, transport)),
    ingest: withCtxdErrors(createConnectClient(IngestService, transport)),
    admin: withCtxdErrors(createConnectClient(AdminService, transport)),
    transport,
    close: () => sessionManager.abort(),
  };
}
