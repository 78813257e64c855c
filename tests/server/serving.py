"""Helpers for the server tests: served copies of a fixture repo and a real ``greprag serve``."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES, ROOT

OLD_S = 3600  # served copies' files are dated an hour back: answers about them are cacheable


def served_copy(dest: Path, name: str = "py_pipeline") -> Path:
    """A git repository (one commit) copied from a fixture, every file dated an hour back."""
    shutil.copytree(FIXTURES / name, dest)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run([*git, *argv], cwd=dest, check=True, capture_output=True)
    age_files(dest)
    return dest


def age_files(repo: Path, seconds: float = OLD_S) -> None:
    past = time.time() - seconds
    for path in repo.rglob("*"):
        if ".git" not in path.parts and path.is_file():
            os.utime(path, (past, past))


def cli_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GREPRAG_")}
    env.update(GREPRAG_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any


@dataclass
class Server:
    """A ``greprag serve`` subprocess on 127.0.0.1 and a tiny client for it."""

    proc: subprocess.Popen[str]
    port: int
    token: str
    cache: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(
        self,
        method: str,
        path: str,
        body: bytes | dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        *,
        auth: bool = True,
    ) -> Reply:
        sent = {"Content-Type": "application/json"}
        if auth and self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        sent.update(headers or {})
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=data, headers=sent)
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, parsed)

    def post(self, path: str, body: dict[str, Any], **kwargs: Any) -> Reply:
        return self.request("POST", path, body, **kwargs)

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.request("GET", path, **kwargs)

    def wait_settled(self, after_batches: int = 0, timeout: float = 30.0) -> dict[str, Any]:
        """Status once the watcher saw more than ``after_batches`` batches and settled."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            root = self.get("/status").body["roots"][0]
            if root["watcher"]["batches"] > after_batches and root["settled"]:
                return root
            time.sleep(0.1)
        raise AssertionError(f"the server did not settle: {root}")

    def stop(self) -> str:
        """Stop it (SIGTERM, as a service manager would); its stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


def start_server(
    repos: list[Path], cache: Path, *args: str, token: str = "", env: dict[str, str] | None = None
) -> Server:
    """``greprag serve --port 0`` for ``repos`` (``env`` added to its environment);
    returns once its runtime file is written."""
    argv = [sys.executable, "-m", "greprag", "serve", "--port", "0"]
    for repo in repos:
        argv += ["--repo", str(repo)]
    if token:
        argv += ["--token", token]
    proc = subprocess.Popen(
        [*argv, *args],
        env={**cli_env(cache), **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        for path in (cache / "servers").glob("*.json"):
            record = json.loads(path.read_text())
            if record["pid"] == proc.pid:
                return Server(proc, record["port"], token, cache)
        if proc.poll() is not None:
            raise AssertionError(f"greprag serve exited: {proc.stderr.read()}")
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("greprag serve did not start within 90 s")
