"""Playing games in bulk: the nogil loop (loop.pyx), shards as columns (batch.py) and the
results schema (schema.py). No Ray, no service."""
