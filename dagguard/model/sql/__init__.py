"""SQL and templates: Jinja templates and the context keys they read, SQL parsing with sqlglot
(lazily), the tables a statement reads and writes, bound parameters and strings built from
pieces. It may import dagguard.model.basics only."""
