"""F3: primitives, traces and tracers, and staging a function into MLIR.
A floor of the frontend (docs/design.md, "Floors"): the package imports nothing itself."""
