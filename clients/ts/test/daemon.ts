// Runs the real ctxd daemon for the integration tests.
//
// The binary is $CTXD_BIN (relative paths resolve against the repo root) or
// .tmp/bin/ctxd in the repo root; `make test-ts` builds it.
import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { type CtxdClient, CtxdError, createClient } from "../src/index.js";

// dist/test/daemon.js -> the package dir is two levels up, the repo four.
const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root (the model and ONNX Runtime are in its .cache). */
export const repoRoot = path.resolve(here, "../../../..");
/** The ctxd binary the tests run. */
export const ctxdBin = path.resolve(repoRoot, process.env.CTXD_BIN || ".tmp/bin/ctxd");
const READY_TIMEOUT_MS = 20_000;

/** A running daemon on a fresh store and socket. */
export interface Daemon {
  /** Temporary directory holding the store, socket, log and config. */
  workDir: string;
  socketPath: string;
  /** The loopback gRPC address when started with `--grpc-tcp`, else "". */
  tcpAddress: string;
  /** The daemon's log so far. */
  log(): string;
  /** Stops it with SIGTERM, removes workDir, and asserts it exited 0. */
  stop(): Promise<void>;
}

/** Starts the daemon with extra serve flags and config.toml text, and waits until it serves. */
export async function startDaemon(options: { args?: string[]; config?: string } = {}): Promise<Daemon> {
  assert.ok(fs.existsSync(ctxdBin), `ctxd binary not found at ${ctxdBin}; run make build or set CTXD_BIN`);
  // Short: unix socket paths are limited to ~107 bytes.
  const workDir = fs.mkdtempSync(path.join("/tmp", "ctxd-ts-"));
  const socketPath = path.join(workDir, "s.sock");
  const logPath = path.join(workDir, "daemon.log");
  const configPath = path.join(workDir, "config.toml");
  fs.writeFileSync(configPath, options.config ?? "");
  const log = () => (fs.existsSync(logPath) ? fs.readFileSync(logPath, "utf8") : "");
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("CTXD_")) env[k] = v;
  }
  // Hermetic: no user config, no HTTP gateway (fixed port, token file).
  env.XDG_CONFIG_HOME = path.join(workDir, "config");
  const out = fs.openSync(logPath, "w");
  const proc: ChildProcess = spawn(
    ctxdBin,
    [
      "serve",
      "--config",
      configPath,
      "--data-dir",
      path.join(workDir, "data"),
      "--socket",
      socketPath,
      "--http=",
      "--model-dir=",
      "--allowed-root",
      workDir,
      ...(options.args ?? []),
    ],
    { stdio: ["ignore", out, out], env },
  );
  fs.closeSync(out);
  const exited = new Promise<number | string | null>((resolve) =>
    proc.once("exit", (code, signal) => resolve(code ?? signal)),
  );
  const stop = async () => {
    let status: number | string | null;
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      status = await exited;
      clearTimeout(timer);
    } else {
      status = proc.exitCode ?? proc.signalCode;
    }
    const text = log();
    fs.rmSync(workDir, { recursive: true, force: true });
    assert.equal(status, 0, `ctxd did not exit 0 after SIGTERM:\n${text}`);
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last: unknown;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      assert.fail(`ctxd exited (${proc.exitCode ?? proc.signalCode}) before serving:\n${log()}`);
    }
    if (fs.existsSync(socketPath)) {
      const probe = createClient({ socketPath, timeoutMs: 2000 });
      try {
        await probe.vfs.listDrives({});
        break;
      } catch (e) {
        if (!(e instanceof CtxdError) || e.type !== "UNAVAILABLE") throw e;
        last = e;
      } finally {
        probe.close();
      }
    }
    if (Date.now() > deadline) {
      assert.fail(`ctxd not ready after ${READY_TIMEOUT_MS} ms (last error: ${String(last)}):\n${log()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const tcpAddress = /grpc_tcp=(127\.0\.0\.1:\d+)/.exec(log())?.[1] ?? "";
  return { workDir, socketPath, tcpAddress, log, stop };
}

/**
 * A daemon with an agent token named `name` (scopes read and write, over
 * gRPC TCP) for the secret `token`, an owner client on its socket and an
 * agent client with the token.
 */
export async function startWithAgent(
  name: string,
  token: string,
): Promise<{ d: Daemon; owner: CtxdClient; agent: CtxdClient }> {
  const sha = createHash("sha256").update(token).digest("hex");
  const d = await startDaemon({
    args: ["--grpc-tcp", "127.0.0.1:0"],
    config: `[[tokens]]\nname = "${name}"\nsha256 = "${sha}"\nscopes = ["read", "write"]\nagent = true\n`,
  });
  assert.ok(d.tcpAddress, `no grpc_tcp address in the log:\n${d.log()}`);
  return {
    d,
    owner: createClient({ socketPath: d.socketPath, timeoutMs: 10_000 }),
    agent: createClient({ address: d.tcpAddress, token, timeoutMs: 10_000 }),
  };
}

/** The CtxdError a call rejects with; fails the test if it succeeds. */
export async function rejection(p: Promise<unknown>): Promise<CtxdError> {
  const e = await p.then(
    () => assert.fail("expected the call to fail"),
    (err: unknown) => err,
  );
  assert.ok(e instanceof CtxdError, `expected a CtxdError, got ${String(e)}`);
  return e;
}
