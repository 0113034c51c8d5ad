"""A small JSON-RPC client that drives `dagguard server` as a subprocess over stdio: every
wait is bounded, so a hung server fails a test instead of hanging it."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

WORKTREE = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


class LspClient:
    def __init__(self, cwd: Path, env: Optional[dict[str, str]] = None) -> None:
        environment = {**os.environ, "PYTHONPATH": str(WORKTREE), "DAGGUARD_NO_CACHE": "1", **(env or {})}
        self.process = subprocess.Popen([sys.executable, "-m", "dagguard", "server"], cwd=cwd, env=environment,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._messages: "queue.Queue[dict[str, Any]]" = queue.Queue()
        self._responses: dict[int, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    # --- wire ----------------------------------------------------------------------------

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            headers: dict[str, str] = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self._messages.put(json.loads(body))

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _pump(self, deadline: float) -> None:
        """Take one message off the wire (bounded by `deadline`), filing it by kind."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the server did not answer in time")
        try:
            message = self._messages.get(timeout=remaining)
        except queue.Empty:
            raise TimeoutError("the server did not answer in time") from None
        if "id" in message and "method" not in message:
            self._responses[message["id"]] = message
        elif "id" in message:   # a request from the server: answer it so it does not wait
            self._send({"id": message["id"], "result": None})
        else:
            self.notifications.append(message)

    # --- calls ---------------------------------------------------------------------------

    def request(self, method: str, params: Any, timeout: float = TIMEOUT) -> Any:
        self._next_id += 1
        number = self._next_id
        self._send({"id": number, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while number not in self._responses:
            self._pump(deadline)
        response = self._responses.pop(number)
        assert "error" not in response, response
        return response.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def wait_for(self, method: str, predicate: Callable[[dict[str, Any]], bool] = lambda p: True,
                 timeout: float = TIMEOUT) -> dict[str, Any]:
        """The params of the first notification `method` (received since the last wait) that matches."""
        deadline = time.monotonic() + timeout
        while True:
            for index, message in enumerate(self.notifications):
                if message["method"] == method and predicate(message["params"]):
                    del self.notifications[:index + 1]
                    return message["params"]
            self._pump(deadline)

    def diagnostics(self, uri: str, version: Optional[int] = None, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        params = self.wait_for("textDocument/publishDiagnostics",
                               lambda p: p["uri"] == uri and (version is None or p.get("version") == version),
                               timeout)
        return params["diagnostics"]

    # --- the session ---------------------------------------------------------------------

    def initialize(self, root: Path, options: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
            "initializationOptions": options or {},
        })
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                              "version": version, "text": text}})
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": [{"text": text}]})

    def close(self, timeout: float = TIMEOUT) -> int:
        """shutdown, then exit; the process's exit code."""
        self.request("shutdown", None, timeout)
        self.notify("exit", None)
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def apply_edit(text: str, edit: dict[str, Any]) -> str:
    """`text` after one LSP TextEdit (positions in UTF-16 code units, as negotiated by default)."""
    from dagguard.engine.noqa import physical_lines

    lines = physical_lines(text)

    def offset(position: dict[str, int]) -> int:
        before = sum(len(line) for line in lines[:position["line"]])
        line = lines[position["line"]] if position["line"] < len(lines) else ""
        units = 0
        for index, char in enumerate(line):
            if units >= position["character"]:
                return before + index
            units += 2 if ord(char) > 0xFFFF else 1
        return before + len(line)

    start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
    return text[:start] + edit["newText"] + text[end:]


def apply_action(text: str, action: dict[str, Any]) -> str:
    for change in action["edit"]["documentChanges"]:
        for edit in sorted(change["edits"], key=lambda e: (e["range"]["start"]["line"],
                                                           e["range"]["start"]["character"]), reverse=True):
            text = apply_edit(text, edit)
    return text
