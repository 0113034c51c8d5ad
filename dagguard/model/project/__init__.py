"""The project index and factories: the project's modules and package roots, which module an
import names, where a value came from, call chains across modules, and the DAG factories (a
function or class that makes DAGs) with the keywords their callers pass. It may import
dagguard.model.basics only."""
