"""F2: what describes a value: dtypes, shapes, shardings, layouts, memory kinds.
A floor of the frontend (docs/design.md, "Floors"): the package imports nothing itself."""
