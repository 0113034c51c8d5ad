"""The Arrow path of dagguard.idempotent: a batch kept as a pyarrow Table from the user's hands
to the engine's bulk load, validated, hashed and converted column by column.

Every module imports pyarrow inside its functions: importing them needs no pyarrow.
"""
