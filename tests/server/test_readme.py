"""The README's editor snippets start the server they name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from tests.server.lsp_client import LspClient  # noqa: E402

try:
    import tomllib
except ModuleNotFoundError:   # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
SECTION = README.split("\n### Editors: `dagguard server`\n", 1)[1].split("\n### ", 1)[0]


def _block(language: str, containing: str) -> str:
    return next(b for b in re.findall(rf"^```{language}\n(.*?)^```$", SECTION, re.MULTILINE | re.DOTALL)
                if containing in b)


def test_every_editor_runs_dagguard_server() -> None:
    import json

    helix = tomllib.loads(_block("toml", "language-server"))["language-server"]["dagguard"]
    vscode = json.loads(_block("json", "glspc"))
    zed = json.loads(_block("json", '"lsp"'))["lsp"]["dagguard"]["binary"]
    neovim = re.search(r"cmd = \{ (.*?) \}", _block("lua", "vim.lsp.config")).group(1)
    assert [helix["command"], *helix["args"]] == ["dagguard", "server"]
    assert [vscode["glspc.serverPath"], *vscode["glspc.serverArgs"]] == ["dagguard", "server"]
    assert [zed["path"], *zed["arguments"]] == ["dagguard", "server"]
    assert neovim == '"dagguard", "server"'


def test_the_snippets_command_serves(tmp_path: Path) -> None:
    helix = tomllib.loads(_block("toml", "language-server"))["language-server"]["dagguard"]
    assert helix["args"] == ["server"]
    client = LspClient(tmp_path)     # `sys.executable -m dagguard server`: the snippets' command
    try:
        assert client.initialize(tmp_path)["serverInfo"]["name"] == "dagguard"
        assert client.close(timeout=30) == 0
    finally:
        client.kill()
