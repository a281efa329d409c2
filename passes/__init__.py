"""Rewrite passes over the `jaxpr` dialect, their rule tables, the `mjax-opt` driver, and
the public API for writing your own passes (docs/passes.md).

Importing this package fills every rule table (`rules/`) and registers every pass (see
`registry.PASSES`).

    from mjax.passes import Pass, register_pass, walk, builder_before, replace

    @register_pass("my-pass")
    class MyPass(Pass):
        '''One line: what it does (mjax-opt --help shows it).'''
        def run(self, module):
            for op in walk(module, "jaxpr.sin"): ...
"""
from mjax.dialect.builder import Builder
from mjax.dialect.types import ShapedArray, aval_of
from mjax.passes.registry import (PASSES, POINTS, Pass, PassError, make_pass, op_error,
                                  parse_pipeline, register_pass, run_pipeline)
from mjax.passes import rules  # noqa: F401  (fills the rule tables)
from mjax.passes import (jaxpr_verify, jaxpr_to_stablehlo, jaxpr_jvp, jaxpr_vjp,  # noqa: F401
                         jaxpr_batch, jaxpr_expand_transforms, jaxpr_checkify,
                         jaxpr_inline, jaxpr_dce, jaxpr_cse, jaxpr_propagate_shardings,
                         jaxpr_discharge_state, jaxpr_pallas_interpret, pallas_mesh,
                         pallas_cores, jaxpr_pallas_to_triton, jaxpr_pallas_to_mosaic,
                         broadcast_per_use, stablehlo_layout_modes,
                         stablehlo_memory_kinds, stablehlo_host_callbacks)
from mjax.passes.jaxpr_verify import verify_module
from mjax.passes.plugins import PluginError, load_pass_plugin
from mjax.passes.rewrite import (Pattern, apply_patterns, builder_before, erase, is_dtype,
                                 replace, walk)
from mjax.passes.user_passes import extra

__all__ = [
    # defining and running passes
    "PASSES", "POINTS", "Pass", "PassError", "make_pass", "op_error", "parse_pipeline",
    "register_pass", "run_pipeline", "verify_module",
    # writing a rewrite
    "Builder", "Pattern", "ShapedArray", "apply_patterns", "aval_of", "builder_before",
    "erase", "is_dtype", "replace", "walk",
    # users' passes in mjax-opt and jit
    "PluginError", "extra", "load_pass_plugin",
]
