"""`--add-noqa`: a `# noqa: CODES` comment for every current finding, merged into the line's
existing noqa comment, every other byte kept."""

from __future__ import annotations
