"""`dagguard server`: the linter as a language server (LSP over stdio, on pygls 2).

The modules each do one job: `app` is the pygls server and its handlers, `workspace` holds
the open documents, their settings and results, and checks them with the linter's own API,
`diagnostics` turns findings into LSP diagnostics, `actions` builds the code actions' edits,
`hover` the rule summaries, `positions` converts columns to the client's position encoding.
Only this package imports pygls and lsprotocol; `dagguard check` never loads it.
"""

from __future__ import annotations

from dagguard.extras import require_module


def run() -> None:
    """Serve on stdin/stdout until the client sends `exit`. Raises MissingExtraError without pygls."""
    require_module("pygls", extra="server", needed_by="dagguard server")
    require_module("lsprotocol", extra="server", needed_by="dagguard server")
    from dagguard.server.app import serve

    serve()
