"""Parse files, build the DAG model, run the rules, apply noqa and configuration."""
