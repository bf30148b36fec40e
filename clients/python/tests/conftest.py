"""Starts a real Flashbulb server for the tests (``node dist/cli.js serve``: hash embedder,
authentication on, a fresh data directory, free ports) and reads the admin key it prints once.

Set ``FLASHBULB_URL`` and ``FLASHBULB_API_KEY`` (an admin key) to run against a server you
started yourself instead. The repository must be built (``npm run build``) for the default.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from flashbulb import AsyncFlashbulb, Flashbulb

REPO = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, url: str, admin_key: str) -> None:
        self.url = url
        self.admin_key = admin_key


def _start() -> Iterator[Server]:
    data_dir = tempfile.mkdtemp(prefix="flashbulb-py-")
    http_port, grpc_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLASHBULB_")}
    env.update({
        "FLASHBULB_EMBEDDER": "hash", "FLASHBULB_AUTH_ENABLED": "true", "FLASHBULB_DATA_DIR": data_dir,
        "FLASHBULB_HTTP_PORT": str(http_port), "FLASHBULB_GRPC_PORT": str(grpc_port), "FLASHBULB_BIND": "127.0.0.1",
        "FLASHBULB_REFLECT_ENABLED": "false", "FLASHBULB_SHARDS": "2",
    })
    log = open(Path(data_dir) / "server.log", "w+b")
    proc = subprocess.Popen(["node", str(REPO / "dist" / "cli.js"), "serve"], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{http_port}"
    try:
        key = _wait_ready(proc, url, Path(data_dir) / "server.log")
        yield Server(url, key)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(data_dir, ignore_errors=True)


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> str:
    deadline = time.monotonic() + 60
    key: str | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode}): {log.read_text(errors='replace')[-2000:]}")
        found = re.search(r"fb_admin_[A-Za-z0-9_\-]+", log.read_text(errors="replace"))
        key = found.group(0) if found else key
        try:
            if key and httpx.get(f"{url}/v1/health/ready", timeout=2, headers={"authorization": f"Bearer {key}"}).status_code == 200:
                return key
        except httpx.TransportError:
            pass
        time.sleep(0.1)  # polling a starting process: there is no event to wait on
    raise RuntimeError(f"the server was not ready within 60 s: {log.read_text(errors='replace')[-2000:]}")


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    if os.environ.get("FLASHBULB_URL"):
        yield Server(os.environ["FLASHBULB_URL"], os.environ.get("FLASHBULB_API_KEY", ""))
        return
    yield from _start()


@pytest.fixture()
def admin(server: Server) -> Iterator[Flashbulb]:
    with Flashbulb(base_url=server.url, api_key=server.admin_key) as client:
        yield client


@pytest.fixture()
def workspace(admin: Flashbulb) -> Iterator[str]:
    """A fresh workspace for one test, dropped afterwards."""
    slug = f"py-{uuid.uuid4().hex[:12]}"
    admin.workspaces_create(slug=slug)
    yield slug
    admin.workspaces_delete(slug)


@pytest.fixture()
def fb(admin: Flashbulb, workspace: str) -> Flashbulb:
    """The admin client scoped to the test's workspace."""
    return admin.with_workspace(workspace)


@pytest.fixture()
async def afb(server: Server, workspace: str) -> AsyncFlashbulb:
    client = AsyncFlashbulb(base_url=server.url, api_key=server.admin_key, workspace=workspace)
    yield client
    await client.aclose()
