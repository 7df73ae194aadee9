// Unit tests of the client against an in-process fake server on a unix
// socket (no daemon needed): socket transport, bearer token, error decoding
// for unary calls and streams.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as http2 from "node:http2";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

import {
  CtxdError,
  ErrorDetailSchema,
  ErrorType,
  IngestService,
  VfsService,
  createClient,
  defaultSocketPath,
  toCtxdError,
} from "../src/index.js";

const notFound = () =>
  new ConnectError("no item at agent:/notes/x.md", Code.NotFound, undefined, [
    {
      desc: ErrorDetailSchema,
      value: {
        type: ErrorType.NOT_FOUND,
        nextActionHint: "Nearby items under agent:/notes: agent:/notes/a.md.",
        ref: "agent:/notes/x.md",
        nearbyRefs: ["agent:/notes/a.md"],
      },
    },
  ]);

describe("client against a fake server", () => {
  const dir = fs.mkdtempSync(path.join("/tmp", "ctxd-ts-fake-"));
  const socketPath = path.join(dir, "s.sock");
  const seenAuth: (string | null)[] = [];
  let server: http2.Http2Server;

  before(async () => {
    const handler = connectNodeAdapter({
      routes(router) {
        router.service(VfsService, {
          async read(req, ctx) {
            seenAuth.push(ctx.requestHeader.get("authorization"));
            if (req.ref === "agent:/notes/x.md") throw notFound();
            if (req.ref === "plain") throw new ConnectError("no detail", Code.FailedPrecondition);
            return { content: `ok:${req.ref}` };
          },
        });
        router.service(IngestService, {
          async *add() {
            yield { event: { case: "progress", value: { phase: "walking" } } };
            throw notFound();
          },
        });
      },
    });
    server = http2.createServer(handler);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("reads over the unix socket and sends the token", async () => {
    const c = createClient({ socketPath, token: "s3cret" });
    try {
      const r = await c.vfs.read({ ref: "a" });
      assert.equal(r.content, "ok:a");
      assert.equal(seenAuth.at(-1), "Bearer s3cret");
    } finally {
      c.close();
    }
    const anon = createClient({ socketPath });
    try {
      await anon.vfs.read({ ref: "b" });
      assert.equal(seenAuth.at(-1), null);
    } finally {
      anon.close();
    }
  });

  it("decodes the ErrorDetail of a unary error", async () => {
    const c = createClient({ socketPath });
    try {
      const err = await c.vfs.read({ ref: "agent:/notes/x.md" }).then(
        () => assert.fail("expected an error"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof CtxdError, `got ${String(err)}`);
      assert.equal(err.code, Code.NotFound);
      assert.equal(err.codeName, "NOT_FOUND");
      assert.equal(err.type, "NOT_FOUND");
      assert.equal(err.message, "no item at agent:/notes/x.md");
      assert.equal(err.hint, "Nearby items under agent:/notes: agent:/notes/a.md.");
      assert.equal(err.ref, "agent:/notes/x.md");
      assert.deepEqual(err.nearby, ["agent:/notes/a.md"]);
      assert.ok(err.cause instanceof ConnectError);

      const plain = await c.vfs.read({ ref: "plain" }).catch((e: unknown) => e);
      assert.ok(plain instanceof CtxdError);
      assert.equal(plain.type, "FAILED_PRECONDITION");
      assert.equal(plain.hint, "");
      assert.equal(plain.detail, undefined);

      const unimpl = await c.vfs.tree({}).catch((e: unknown) => e);
      assert.ok(unimpl instanceof CtxdError);
      assert.equal(unimpl.type, "UNIMPLEMENTED");
    } finally {
      c.close();
    }
  });

  it("decodes errors thrown by a stream", async () => {
    const c = createClient({ socketPath });
    const phases: string[] = [];
    try {
      await assert.rejects(
        async () => {
          for await (const ev of c.ingest.add({ sources: ["x"] })) {
            if (ev.event.case === "progress") phases.push(ev.event.value.phase);
          }
        },
        (e: unknown) => e instanceof CtxdError && e.type === "NOT_FOUND" && e.nearby[0] === "agent:/notes/a.md",
      );
      assert.deepEqual(phases, ["walking"]);
    } finally {
      c.close();
    }
  });

  it("reports a missing socket as UNAVAILABLE", async () => {
    const c = createClient({ socketPath: path.join(dir, "nobody.sock") });
    try {
      const err = await c.vfs.exists({ ref: "/x" }).catch((e: unknown) => e);
      assert.ok(err instanceof CtxdError);
      assert.equal(err.type, "UNAVAILABLE");
    } finally {
      c.close();
    }
  });
});

describe("helpers", () => {
  it("toCtxdError is idempotent and wraps plain errors", () => {
    const e = toCtxdError(notFound());
    assert.equal(toCtxdError(e), e);
    assert.equal(e.type, "NOT_FOUND");
    const other = toCtxdError(new Error("boom"));
    assert.equal(other.type, "UNKNOWN");
    assert.equal(other.message, "boom");
  });

  it("defaultSocketPath follows the daemon", () => {
    assert.equal(defaultSocketPath({ CTXD_SOCKET: "/x/y.sock" }), "/x/y.sock");
    assert.equal(defaultSocketPath({ XDG_RUNTIME_DIR: "/run/user/7" }), "/run/user/7/ctxd/ctxd.sock");
    assert.match(defaultSocketPath({ TMPDIR: "/tt" }), /^\/tt\/ctxd-\d+\/ctxd\/ctxd\.sock$/);
  });
});
