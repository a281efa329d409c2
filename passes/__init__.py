"""Rewrite passes over the `jaxpr` dialect, their rule tables, and the `mjax-opt` driver.

Importing this package registers every pass (see `registry.PASSES`).
"""
from mjax.passes.registry import (PASSES, Pass, PassError, parse_pipeline, register_pass,
                                  run_pipeline)
from mjax.passes import jaxpr_verify, jaxpr_to_stablehlo  # noqa: F401  (register passes)

__all__ = ["PASSES", "Pass", "PassError", "parse_pipeline", "register_pass", "run_pipeline"]
