"""Eager transformations rounding as JAX's op-by-op evaluation.

JAX runs `grad(f)(x)`, `vmap(f)(x)` and `jvp` called eagerly one primitive at a time (each
its own compiled program), while mjax compiles the whole transformed function once. On the
CPU, XLA fuses neighbouring elementwise ops, and a multiply feeding an add in one fused
loop becomes a fused multiply-add (rounded once): float results came out an ulp away from
JAX's (vmap of x*y+z, grad of tanh losses).

A program made only of primitives that are one XLA op each (`ROUNDED_ALONE`) is compiled
with the platform's `op_by_op_options` (runtime/backend.py: no fusion on the CPU): each op
then writes its result to memory, as JAX's eager evaluation does. A program with any
other op (a primitive XLA expands into several ops, which JAX fuses within that
primitive's program: a polynomial, a loop), a call of a user's jit, or a traced call of a
function JAX jits whose ops fuse (mjax/tracing/fused_units.py: jnp.var, jnp.mean) keeps
XLA's default compilation, which matches JAX's fused evaluation of those parts.

Left: XLA's algebraic simplifier still rewrites across ops (a / sqrt(b) becomes a *
rsqrt(b), as no single JAX program sees); turned off, it would also stop the rewrites
JAX's one-function programs get (x / broadcast(s) as a multiply by 1/s in jnp.divide)."""
from __future__ import annotations

from mjax.runtime.backend import get_backend, platform_record

# Primitives each lowered to one XLA op, or to ops no fusion rounds differently.
ROUNDED_ALONE = frozenset("jaxpr." + n for n in """
    add sub mul div rem pow integer_pow max min atan2 neg square abs sign floor ceil round
    is_finite exp exp2 expm1 log log1p sqrt rsqrt cbrt sin cos tan tanh logistic
    not and or xor shift_left shift_right_arithmetic shift_right_logical population_count clz
    eq ne lt le gt ge real imag complex conj
    convert_element_type bitcast_convert_type reduce_precision stop_gradient copy constant
    iota broadcast_in_dim reshape squeeze expand_dims transpose rev tile concatenate stack
    unstack split pad slice select_n clamp dot_general reduce_sum reduce_prod reduce_max
    reduce_min reduce_and reduce_or reduce_xor argmin argmax cumsum cumprod cummax cummin
    sort dynamic_slice dynamic_update_slice gather scatter scatter_add
    call jvp vjp vmap""".split()) | {"func.func", "func.return"}


def _rounds_alone(module) -> bool:
    """Whether every op of `module` is in ROUNDED_ALONE and no call is a user's jit."""
    for fn in module.body.operations:
        if fn.operation.name != "func.func":
            return False
        for op in fn.regions[0].blocks[0].operations:
            name = op.operation.name
            if name not in ROUNDED_ALONE or op.operation.regions:
                return False
            if name == "jaxpr.call" and _is_users_jit(module, op):
                return False
    return True


def _is_users_jit(module, call) -> bool:
    callee = call.operation.attributes["callee"].value
    for fn in module.body.operations:
        attrs = fn.operation.attributes
        if "sym_name" in attrs and attrs["sym_name"].value == callee:
            return "mjax.scope" in attrs
    return True


def compiler_options(module, backend_name, fused_calls: bool) -> dict:
    """The XLA options an eager transformation's `module` compiles with for `backend_name`:
    the platform's op-by-op options when the program rounds as JAX's op-by-op evaluation
    then (see the module's docstring), none otherwise."""
    options = platform_record(get_backend(backend_name).platform).op_by_op_options
    if not options or fused_calls or not _rounds_alone(module):
        return {}
    return dict(options)
