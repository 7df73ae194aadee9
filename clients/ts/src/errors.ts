import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ErrorDetail,
  ErrorDetailSchema,
  ErrorType,
} from "./gen/ctxd/v1/errors_pb.js";

/** gRPC names of the status codes ("NOT_FOUND"), indexed by Connect's Code. */
const codeNames: Record<number, string> = {
  [Code.Canceled]: "CANCELLED",
  [Code.Unknown]: "UNKNOWN",
  [Code.InvalidArgument]: "INVALID_ARGUMENT",
  [Code.DeadlineExceeded]: "DEADLINE_EXCEEDED",
  [Code.NotFound]: "NOT_FOUND",
  [Code.AlreadyExists]: "ALREADY_EXISTS",
  [Code.PermissionDenied]: "PERMISSION_DENIED",
  [Code.ResourceExhausted]: "RESOURCE_EXHAUSTED",
  [Code.FailedPrecondition]: "FAILED_PRECONDITION",
  [Code.Aborted]: "ABORTED",
  [Code.OutOfRange]: "OUT_OF_RANGE",
  [Code.Unimplemented]: "UNIMPLEMENTED",
  [Code.Internal]: "INTERNAL",
  [Code.Unavailable]: "UNAVAILABLE",
  [Code.DataLoss]: "DATA_LOSS",
  [Code.Unauthenticated]: "UNAUTHENTICATED",
};

/**
 * The error type assumed when a status carries no ErrorDetail (a transport
 * failure, a deadline): codes that stand for exactly one type map to it, the
 * rest fall back to the code's name.
 */
const codeTypes: Record<number, string> = {
  [Code.AlreadyExists]: "PATH_CONFLICT",
  [Code.Aborted]: "CONTENT_CHANGED",
};

/** The gRPC name of a Connect code, e.g. "NOT_FOUND". */
export function codeName(code: Code): string {
  return codeNames[code] ?? `CODE_${code}`;
}

/**
 * An error from the ctxd daemon, or from the transport on the way to it.
 *
 * Every error status the daemon returns carries one ctxd.v1.ErrorDetail; its
 * fields are flattened here. `type` is the short ErrorType name
 * ("NOT_FOUND", "PATH_CONFLICT", "INVALID_ARGUMENT", ...); without a detail it
 * is derived from the code ("UNAVAILABLE", "DEADLINE_EXCEEDED", ...).
 */
export class CtxdError extends Error {
  override name = "CtxdError";
  /** The status code (Connect's Code enum; gRPC name in codeName). */
  readonly code: Code;
  /** The short error type, e.g. "NOT_FOUND". */
  readonly type: string;
  /** A next step an agent can take (ErrorDetail.next_action_hint), or "". */
  readonly hint: string;
  /** The ref the error is about, in drive:/path form, or "". */
  readonly ref: string;
  /** For NOT_FOUND: existing refs near the missing one. */
  readonly nearby: string[];
  /** The decoded ErrorDetail, when the status carried one. */
  readonly detail: ErrorDetail | undefined;
  /** Response headers and trailers of the failed call. */
  readonly metadata: Headers;

  constructor(
    message: string,
    init: {
      code: Code;
      type?: string;
      hint?: string;
      ref?: string;
      nearby?: string[];
      detail?: ErrorDetail;
      metadata?: Headers;
      cause?: unknown;
    },
  ) {
    super(message, { cause: init.cause });
    this.code = init.code;
    this.type = init.type || codeTypes[init.code] || codeName(init.code);
    this.hint = init.hint ?? "";
    this.ref = init.ref ?? "";
    this.nearby = init.nearby ?? [];
    this.detail = init.detail;
    this.metadata = init.metadata ?? new Headers();
  }

  /** The gRPC name of the code, e.g. "NOT_FOUND". */
  get codeName(): string {
    return codeName(this.code);
  }

  override toString(): string {
    return `${this.name}: ${this.type}: ${this.message}` + (this.hint ? ` (hint: ${this.hint})` : "");
  }
}

/**
 * Converts anything a Connect client threw (a ConnectError, or any other
 * error) into a CtxdError, decoding the ErrorDetail from the status details.
 * A CtxdError is returned unchanged.
 */
export function toCtxdError(err: unknown): CtxdError {
  if (err instanceof CtxdError) {
    return err;
  }
  const ce = ConnectError.from(err);
  const detail = ce.findDetails(ErrorDetailSchema)[0];
  const init = { code: ce.code, metadata: ce.metadata, cause: err };
  if (detail === undefined || detail.type === ErrorType.UNSPECIFIED) {
    if (cannotConnect(err)) {
      // connect-node reports a missing socket as INTERNAL; like grpc-go and
      // grpcio, call it UNAVAILABLE: the daemon is not there (yet).
      init.code = Code.Unavailable;
    }
    return new CtxdError(ce.rawMessage, { ...init, detail });
  }
  return new CtxdError(ce.rawMessage, {
    ...init,
    type: ErrorType[detail.type] ?? `UNKNOWN_${detail.type}`,
    hint: detail.nextActionHint,
    ref: detail.ref,
    nearby: [...detail.nearbyRefs],
    detail,
  });
}

const connectFailures = new Set(["ENOENT", "ECONNREFUSED", "ENOTSOCK", "ECONNRESET", "EPIPE"]);

/** Whether a Node system error from connecting to the socket is in err's cause chain. */
function cannotConnect(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = err; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const { code, syscall } = e as Error & { code?: unknown; syscall?: unknown };
    if (syscall === "connect" && typeof code === "string" && connectFailures.has(code)) {
      return true;
    }
  }
  return false;
}
