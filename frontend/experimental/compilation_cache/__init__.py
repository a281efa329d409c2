"""`mjax.experimental.compilation_cache`: JAX's module path of the persistent cache API."""
