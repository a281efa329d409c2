"""`jaxpr.call_exported`: calls a serialized (exported) StableHLO module.

    %y = "jaxpr.call_exported"(%x) {fun_name = "f", module = "module { func.func @main ...",
                                    result_shapes = [array<i64: 3>], result_dtypes = [f32]}
         : (tensor<3xf32>) -> tensor<3xf32>

`module` is the StableHLO text of the exported module (its `@main` is the entry point); a
module exported for several platforms takes the platform index first, and
`platform_index` says which one this call passes. Lowering clones the module's functions
into the module being lowered and calls its `@main`. JAX: export.call_exported_p.
"""
from __future__ import annotations

import functools

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.context import context
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops.callbacks import _DTypes
from mjax.dialect.symbols import main_function
from mjax.dialect.types import ShapedArray, aval_of


@functools.lru_cache(maxsize=64)
def module_signature(text: str) -> tuple[tuple[ShapedArray, ...], tuple[ShapedArray, ...]]:
    """(argument avals, result avals) of `@main` in the StableHLO module `text`."""
    with context():
        module = ir.Module.parse(text)
        main = main_function(module)
        if main is not None:
            ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
            return (tuple(aval_of(t) for t in ftype.inputs),
                    tuple(aval_of(t) for t in ftype.results))
    raise TypeError("the exported module has no @main function")


class CallExportedOp(JaxprOp, name="call_exported"):
    """Calls `@main` of the exported StableHLO `module` on the operands; results have the
    declared `result_shapes`/`result_dtypes`. JAX: export.call_exported_p."""

    num_operands = None
    attributes = {
        "module": A.Str(),
        "fun_name": A.Str(default="main"),
        "result_shapes": A.Nested(default=None, depth=2),
        "result_dtypes": _DTypes(default=None),
        # A module exported for several platforms takes this index as its first argument.
        "platform_index": A.Int(default=None),
    }

    @classmethod
    def infer(cls, *avals, module, fun_name, result_shapes, result_dtypes, platform_index):
        result_shapes, result_dtypes = result_shapes or (), result_dtypes or ()
        if len(result_shapes) != len(result_dtypes):
            raise TypeError(f"has {len(result_shapes)} result_shapes but "
                            f"{len(result_dtypes)} result_dtypes")
        try:
            ins, outs = module_signature(module)
        except ir.MLIRError as e:
            raise TypeError(f"the module of '{fun_name}' does not parse: {e}") from None
        if platform_index is not None:
            if not ins or ins[0] != ShapedArray((), "int32"):
                raise TypeError(f"platform_index is set but @main of '{fun_name}' takes no "
                                f"i32 platform index first")
            ins = ins[1:]
        got = tuple(a.strip_weak_type() for a in avals)
        if len(got) != len(ins):
            raise TypeError(f"'{fun_name}' takes {len(ins)} arguments, got {len(got)}")
        for i, (want, have) in enumerate(zip(ins, got)):
            if want != have:
                raise TypeError(f"operand {i} of '{fun_name}' has type {have.str_short()}, "
                                f"but @main expects {want.str_short()}")
        declared = tuple(ShapedArray(tuple(s), d) for s, d in zip(result_shapes, result_dtypes))
        if declared != outs:
            raise TypeError(f"declared results {[a.str_short() for a in declared]} of "
                            f"'{fun_name}' differ from @main's "
                            f"{[a.str_short() for a in outs]}")
        return declared
