"""F5: vmap: batching rules' driver and the batched values.
A floor of the frontend (docs/design.md, "Floors"): the package imports nothing itself."""
