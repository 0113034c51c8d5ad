"""The DAG model: the DagModel, TaskModel and FileModel dataclasses (models.py) and the
single-pass builder that makes them from a file's tree (builder.py), with what a DAG's body
states: attributes set after construction, task groups and nesting, branches, dependencies
and the task graph, serial tasks, SubDAGs, DAGs the builder cannot see, operator classes and
dag-factory YAML. It may import dagguard.model.basics and dagguard.model.project."""
