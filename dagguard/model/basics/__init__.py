"""Names and values: the libcst tree helpers, parsing, a module's scopes and bindings, the static
value of an expression (constants, dicts, datetimes, a project function's returned dict), call
arguments, import guards, loop passes and Airflow's names and context keys. The bottom of the
model: it imports no other dagguard package (only the standard library and libcst)."""
