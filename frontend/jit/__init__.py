"""F5: jit: its calls, caches, traces and the compiled stages.
A floor of the frontend (docs/design.md, "Floors"): the package imports nothing itself."""
