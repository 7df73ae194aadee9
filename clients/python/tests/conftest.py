"""Fixtures that run the real ctxd daemon for the integration tests."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator, Sequence

import pytest

import ctxd

REPO_ROOT = Path(__file__).resolve().parents[3]
READY_TIMEOUT = 20.0


def ctxd_bin() -> Path:
    """The daemon binary: $CTXD_BIN, default .tmp/bin/ctxd in the repo root."""
    p = Path(os.environ.get("CTXD_BIN") or ".tmp/bin/ctxd")
    if not p.is_absolute():
        p = REPO_ROOT / p
    return p


class Daemon:
    def __init__(self, proc: subprocess.Popen, socket: str, log: Path) -> None:
        self.proc = proc
        self.socket = socket
        self.log = log
        self.tcp = ""  # loopback TCP address, when served

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def client(self, timeout: float = 10.0) -> ctxd.Client:
        return ctxd.Client(socket=self.socket, timeout=timeout)


def _wait_ready(d: Daemon) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    last: Exception | None = None
    while time.monotonic() < deadline:
        if d.proc.poll() is not None:
            pytest.fail(f"ctxd exited with {d.proc.returncode} before serving:\n{d.log_text()}")
        if os.path.exists(d.socket):
            # A fresh channel per attempt: a channel that failed to connect
            # backs off, and later calls on it would fail fast.
            with ctxd.Client(socket=d.socket, timeout=2.0) as c:
                try:
                    c.list_drives()
                    return
                except ctxd.UnavailableError as e:
                    last = e
        time.sleep(0.05)
    pytest.fail(f"ctxd not ready after {READY_TIMEOUT}s (last error: {last}):\n{d.log_text()}")


@contextlib.contextmanager
def _run_daemon(
    tmp_path_factory: pytest.TempPathFactory, extra_args: Sequence[str] = (), config: str = ""
) -> Iterator[Daemon]:
    """Runs the real daemon on a fresh store and socket; ``config`` is the
    text of its config.toml."""
    binary = ctxd_bin()
    if not binary.is_file():
        pytest.fail(f"ctxd binary not found at {binary}; build it (make build) or set CTXD_BIN")
    data_dir = tmp_path_factory.mktemp("ctxd-data")
    # unix socket paths are limited to ~107 bytes, so keep it short and in /tmp.
    sock_dir = tempfile.mkdtemp(prefix="ctxd-py-", dir="/tmp")
    socket = os.path.join(sock_dir, "s.sock")
    log = data_dir / "daemon.log"
    # Hermetic: no user config, no CTXD_* overrides, no HTTP gateway (which
    # would need a fixed port and a token file).
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXD_")}
    env["XDG_CONFIG_HOME"] = str(data_dir / "config")
    config_file = data_dir / "config.toml"
    config_file.write_text(config)
    with open(log, "wb") as logf:
        proc = subprocess.Popen(
            [str(binary), "serve", "--config", str(config_file), "--data-dir", str(data_dir / "store"),
             "--socket", socket, "--http=", "--model-dir=",
             "--allowed-root", str(tmp_path_factory.getbasetemp()), *extra_args],
            stdout=logf,
            stderr=subprocess.STDOUT,
            env=env,
        )
    d = Daemon(proc, socket, log)
    try:
        _wait_ready(d)
        yield d
    finally:
        rc = proc.poll()
        if rc is None:
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                rc = "timeout"
        shutil.rmtree(sock_dir, ignore_errors=True)
    # Reached only when the tests ran: the daemon must stop cleanly on SIGTERM.
    if rc != 0:
        pytest.fail(f"ctxd did not exit 0 after SIGTERM (got {rc}):\n{d.log_text()}")


@pytest.fixture(scope="session")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with _run_daemon(tmp_path_factory) as d:
        yield d


#: The agent token of :func:`agent_daemon` (a test secret, not a real one).
AGENT_TOKEN = "agent-test-token-not-a-secret"


@pytest.fixture(scope="module")
def agent_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon that also serves gRPC on loopback TCP, where the token
    AGENT_TOKEN is an agent's (``agent = true``, read and write); its
    address is ``d.tcp``."""
    sha = hashlib.sha256(AGENT_TOKEN.encode()).hexdigest()
    config = f"""
[[tokens]]
name = "harness"
sha256 = "{sha}"
scopes = ["read", "write"]
agent = true
"""
    token_file = tmp_path_factory.mktemp("ctxd-token") / "token"
    with _run_daemon(tmp_path_factory, ["--grpc-tcp", "127.0.0.1:0", "--token-file", str(token_file)], config) as d:
        m = re.search(r"grpc_tcp=(127\.0\.0\.1:\d+)", d.log_text())
        if m is None:
            pytest.fail(f"no grpc_tcp address in the daemon log:\n{d.log_text()}")
        d.tcp = m.group(1)
        yield d


@pytest.fixture
def client(daemon: Daemon) -> Iterator[ctxd.Client]:
    with daemon.client() as c:
        yield c
