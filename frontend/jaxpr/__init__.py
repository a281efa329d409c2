"""F5: jaxprs: make_jaxpr, jaxpr objects and their printing.
A floor of the frontend (docs/design.md, "Floors"): the package imports nothing itself."""
