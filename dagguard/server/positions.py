"""Columns between the linter (1-based code points) and LSP (0-based, in the negotiated
encoding's code units: UTF-16 unless the client offers UTF-32 or UTF-8)."""

from __future__ import annotations

from typing import Sequence


def to_client_column(line_text: str, column: int, encoding: str) -> int:
    """The 0-based client column of 1-based code-point `column` on a line."""
    prefix = line_text[:max(column - 1, 0)]
    if encoding == "utf-32":
        return len(prefix)
    if encoding == "utf-8":
        return len(prefix.encode("utf-8", errors="surrogatepass"))
    return len(prefix) + sum(1 for char in prefix if ord(char) > 0xFFFF)


def from_client_column(line_text: str, character: int, encoding: str) -> int:
    """The 0-based code-point column of a client column on a line (clamped to the line)."""
    if encoding == "utf-32":
        return min(character, len(line_text))
    units = 0
    for index, char in enumerate(line_text):
        if units >= character:
            return index
        if encoding == "utf-8":
            units += len(char.encode("utf-8", errors="surrogatepass"))
        else:
            units += 2 if ord(char) > 0xFFFF else 1
    return len(line_text)


def line_at(lines: Sequence[str], number: int) -> str:
    """The text of 1-based line `number`, without its ending ("" beyond the end)."""
    if 1 <= number <= len(lines):
        return lines[number - 1].rstrip("\r\n")
    return ""
