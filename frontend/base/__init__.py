"""F1: the ground floor: errors, pytrees, JAX's parameters, tracebacks, monitoring.
A floor of the frontend (docs/design.md, "Floors"): the package imports nothing itself."""
