"""F3: concrete arrays: their placement, eager dispatch and transfers.
A floor of the frontend (docs/design.md, "Floors"): the package imports nothing itself."""
