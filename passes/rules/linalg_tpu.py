"""Linalg ops that a TPU lowering expands into an algorithm built from other ops (JAX:
`mlir.register_lowering(svd_p, mlir.lower_fun(_svd_tpu), platform="tpu")`, and eigh of
matrices larger than 256 through JAX's `lower_fun(_eigh_qdwh_impl)`).

The op stays one op through jvp, vmap and transposition, so its own rules apply (svd's
and eigh's JVPs, not the derivative of the algorithm's loops); only --jaxpr-to-stablehlo,
lowering for a TPU, replaces it. The algorithm is written with mjax's lax functions in the
frontend (mjax/lax/linalg_tpu.py, eigh_tpu.py), which registers it here:

    register_expansion("svd", fn)   # fn(operand aval, *params) -> (a StableHLO module
                                    # whose public @main computes the op for a TPU, the
                                    # values of its trailing arguments: captured arrays)

and the op's lowering rule copies that @main's body in the op's place (`expand`): the
same StableHLO JAX's lower_fun emits there. Passes import nothing of the frontend; a
process that has not imported mjax has no expansions, and says so.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.symbols import functions, module_body
from mjax.passes.rules import hlo as H
from mjax.passes.ir_util import callee_of, clone_into, entry_block, nested_ops
from mjax.passes.rules.linalg_ffi import partial_subset, xla_custom_call

# The largest matrix XLA's TPU Jacobi eigensolver takes in JAX's default TPU eigh; larger
# ones go through JAX's QDWH spectral divide and conquer (jax/_src/tpu/linalg/eigh.py).
TPU_JACOBI_MAX = 256

_EXPANSIONS: dict[str, Callable] = {}


def register_expansion(name: str, fn: Callable) -> None:
    """Records the frontend's algorithm for the op `jaxpr.<name>` lowered for a TPU."""
    _EXPANSIONS[name] = fn


def expand(ctx, name: str, operands, *params) -> list[ir.Value]:
    """The results of the algorithm registered for `name`, lowered for a TPU for the op's
    operand types and `params`, its StableHLO copied before the op (the private functions
    it calls copied into the op's module under fresh names)."""
    fn = _EXPANSIONS.get(name)
    if fn is None:
        raise NotImplementedError(
            f"{name} lowered for a TPU expands into JAX's TPU algorithm, which mjax's "
            f"frontend (mjax.lax.linalg_tpu) registers: import mjax in this process")
    made, consts = fn(*ctx.avals_in, *params)
    # (a copy: the frontend's module may be a cached Lowered's, and the copied ops must
    # not read values of a module that is then freed)
    with made.context:
        made = ir.Module.parse(made.operation.get_asm(enable_debug_info=True))
    fns = functions(made)
    module = ctx.op
    while module.name != "builtin.module":
        module = module.parent
    taken = functions(module)
    renamed = {}
    for old in sorted(fns):
        if old != "main":
            new, k = f"{old}_tpu", 1
            while new in taken or new in fns:
                new, k = f"{old}_tpu_{k}", k + 1
            renamed[old] = new
            taken[new] = fns[old]
    for op in nested_ops(made.operation):
        if op.name == "func.call" and callee_of(op) in renamed:
            op.attributes["callee"] = ir.FlatSymbolRefAttr.get(renamed[callee_of(op)])
    body = module_body(module)
    for old, new in renamed.items():
        fns[old].attributes["sym_name"] = ir.StringAttr.get(new)
        fns[old].attributes["sym_visibility"] = ir.StringAttr.get("private")
        fns[old].clone(ip=ir.InsertionPoint(body))
    block = entry_block(fns["main"])
    ip = ir.InsertionPoint(ctx.op)
    with ip:     # (captured arrays, constants here as in JAX's lower_fun)
        operands = list(operands) + [hlo.constant(H.A.dense_elements(np.ascontiguousarray(c)))
                                     for c in consts]
    env = dict(zip(block.arguments, operands, strict=True))
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            return [env[v] for v in op.operands]
        env.update(zip(op.results, clone_into(op, ip, env).results))
    raise ValueError(f"the TPU expansion of {name} returns nothing")


def svd_tpu(ctx, a, full_matrices: bool, compute_uv: bool,
            subset_by_index=None) -> list[ir.Value]:
    """JAX's TPU SVD (QDWH polar decomposition, then eigh of the Hermitian factor, sorted
    descending; that eigh is itself expanded beyond 256 or for a subset_by_index, which
    the SVD hands it), as the op's results (s, u, vt) or (s,)."""
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    outs = expand(ctx, "svd", [a], bool(full_matrices), bool(compute_uv), subset)
    if not compute_uv:
        return outs
    u, s, vt = outs
    return [s, u, vt]


def eigh_tpu_rule(ctx, a, lower: bool, sort_eigenvalues: bool, subset_by_index,
                  algorithm) -> list[ir.Value]:
    """JAX's TPU eigh (jax/_src/tpu/linalg/eigh.py _eigh_tpu_lowering) by the op's
    `algorithm`: JACOBI is XLA's Jacobi `Eigh` of any size (its options
    "lower,sort,max_iter,tol" in backend_config; its results the op's, a subset's
    included, as JAX's custom call); QDWH (None's) is that `Eigh` too up to 256 without a
    subset, else JAX's QDWH spectral divide and conquer (eigh_tpu), which takes
    subset_by_index; QR raises JAX's error."""
    algorithm = algorithm or "qdwh"
    if algorithm == "qr":
        raise NotImplementedError("QR algorithm is not supported on TPU")
    n = ctx.avals_in[0].shape[-1]
    if algorithm == "qdwh" and (n > TPU_JACOBI_MAX or partial_subset(subset_by_index, n)):
        return eigh_tpu(ctx, a, lower, sort_eigenvalues, subset_by_index)
    config = f"{int(bool(lower))},{int(bool(sort_eigenvalues))},100,1e-6"
    return xla_custom_call("Eigh", [a], list(ctx.avals_out), backend_config=config)


def eigh_tpu(ctx, a, lower: bool, sort_eigenvalues: bool,
             subset_by_index=None) -> list[ir.Value]:
    """JAX's TPU eigh of a matrix larger than TPU_JACOBI_MAX, or of a subset_by_index:
    QDWH spectral divide and conquer down to blocks for XLA's Jacobi `Eigh`
    (mjax/lax/eigh_tpu.py), as the op's results (v, w)."""
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    return expand(ctx, "eigh", [a], bool(lower), bool(sort_eigenvalues), subset)


__all__ = ["TPU_JACOBI_MAX", "eigh_tpu", "eigh_tpu_rule", "expand", "register_expansion",
           "svd_tpu"]
