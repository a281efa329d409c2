"""Rules for `jaxpr.call_exported` (dialect/ops/export.py).

Lowering: the exported module's functions are cloned into the module being lowered under
private names (once per distinct module), and the op becomes a call of its `@main`.

    %y = "jaxpr.call_exported"(%x) {fun_name = "f", module = "module { func.func @main ..."}
  ==>
    %y = func.call @exported_f_<hash>(%x)
    func.func private @exported_f_<hash>(...) { ... }      // was @main

JAX: export._call_exported_lowering (mlir.merge_mlir_modules). Differentiation goes
through `Exported.call`'s custom_vjp, whose backward calls the exported VJP, so the op
itself has no JVP; batching is not supported (as in JAX).
"""
from __future__ import annotations

import contextvars
import hashlib
import re

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.ops.export import CallExportedOp
from mjax.dialect.types import tensor_type
from mjax.passes.derived import MARK
from mjax.passes.registry import PassError
from mjax.passes.rules.ad_util import no_transpose
from mjax.passes.rules.tables import BATCH, JVP, SHARD, lowering


def _enclosing_module(op: ir.Operation) -> ir.Operation:
    while op.name != "builtin.module":
        op = op.parent
    return op


def _clone_functions(target: ir.Operation, text: str, prefix: str, origin=None) -> str:
    """Parses `text` and moves its functions into `target` with `prefix` added to their
    names (all private; where `origin` names an attribute, each holds its old name
    there); returns the new name of its @main."""
    module = ir.Module.parse(text)
    table = ir.SymbolTable(module.operation)
    funcs = [op.operation for op in module.body.operations
             if op.operation.name == "func.func"]
    for fn in funcs:
        old = ir.StringAttr(fn.attributes["sym_name"]).value
        new = f"{prefix}_{old}"
        ir.SymbolTable.replace_all_symbol_uses(old, new, module.operation)
        table.set_symbol_name(fn, new)
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        if origin is not None:
            fn.attributes[origin] = ir.StringAttr.get(old)
        if MARK in fn.attributes:
            # What it was derived from was renamed too: a function of the target module
            # with the old name is another one, whose derived functions these are not.
            mark = ir.DictAttr(fn.attributes[MARK])
            fields = {k: mark[k] for k in ("from", "by", "params") if k in mark}
            fields["from"] = ir.StringAttr.get(f"{prefix}_{ir.StringAttr(mark['from']).value}")
            fn.attributes[MARK] = ir.DictAttr.get(fields)
        # Aliasing and sharding annotations are for an entry computation only.
        for attr in ("arg_attrs", "res_attrs"):
            if attr in fn.attributes:
                del fn.attributes[attr]
    body = target.regions[0].blocks[0]
    for fn in funcs:
        body.append(fn)
    return f"{prefix}_main"


# The number of devices the program being lowered is compiled for, set by the frontend
# around its lowering (None: unknown, as in mjax-opt: not checked).
CALLER_DEVICES: contextvars.ContextVar = contextvars.ContextVar("caller_devices",
                                                               default=None)
_NUM_PARTITIONS = re.compile(r"^module\b[^\n]*mhlo\.num_partitions = (\d+)", re.M)


class ExportDevicesError(PassError, ValueError):
    """JAX's ValueError for an export for several devices called in a program compiled
    for another number of devices."""

    def __str__(self):
        return self.message


def _check_devices(loc, module: str, fun_name: str) -> None:
    n = CALLER_DEVICES.get()
    m = _NUM_PARTITIONS.search(module)       # (the first: the module's own attribute)
    exported = int(m.group(1)) if m else 1
    if n is not None and exported != 1 and n != exported:
        raise ExportDevicesError(loc, f"Function {fun_name} was exported for {exported} "
                                      f"devices and is called in a context with {n} "
                                      f"devices, which is not allowed.")


@lowering(CallExportedOp)
def _call_exported_lower(ctx, *args, module, fun_name, result_shapes, result_dtypes,
                         platform_index):
    _check_devices(ctx.op.location, module, fun_name)
    target = _enclosing_module(ctx.op)
    digest = hashlib.sha1(module.encode()).hexdigest()[:12]
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in fun_name)
    prefix = f"exported_{safe}_{digest}"
    callee = f"{prefix}_main"
    if callee not in ir.SymbolTable(target):
        _clone_functions(target, module, prefix)
    operands = list(args)
    if platform_index is not None:
        index = np.asarray(platform_index, np.int32)
        operands = [hlo.constant(A.dense_elements(index))] + operands
    call = func_d.CallOp([tensor_type(a) for a in ctx.avals_out],
                         ir.FlatSymbolRefAttr.get(callee), operands)
    return list(call.results)


class NoVjpError(PassError, ValueError):
    """JAX's ValueError for differentiating an Exported serialized without (enough)
    VJPs; its text starts as JAX's, and it is located at the op for mjax-opt."""

    def __str__(self):
        return self.message


@JVP.register(CallExportedOp)
def _call_exported_jvp(b, primals, tangents, **params):
    # (a call_exported with tangents: one its exporter gave no VJP for)
    raise NoVjpError(b.loc, "No VJP is available for this exported function (serialize it "
                            "with a higher vjp_order to differentiate Exported.call)")


no_transpose(CallExportedOp, "an exported module is not known to be linear")
BATCH.unsupported(CallExportedOp, "an exported module has fixed shapes; vmap over "
                                  "Exported.call is not supported (as in JAX)")
SHARD.unsupported(CallExportedOp, "an exported module is a black box to sharding "
                                  "propagation")
