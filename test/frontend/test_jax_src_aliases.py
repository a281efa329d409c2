"""The JAX-private modules JAX's "primitives" documentation page (docs/jax-primitives.md)
imports: `jax._src.lax.lax`, `jax._src.api` and `jax._src.lib.mlir.dialects.hlo`. The
page's primitive, with its abstract evaluation, an MLIR lowering rule built from `hlo`
ops, a JVP, a transpose and a batching rule, runs under jit, grad, vmap and their
compositions with the same results as under jax (each program in its own process:
`python -m mjax` for mjax)."""
import json
import os
import subprocess
import sys
import textwrap

PAGE = textwrap.dedent("""
    import json
    import numpy as np
    import jax
    from jax._src.lax import lax
    from jax._src import api
    from jax._src.lib.mlir.dialects import hlo
    from jax.extend import core as extend_core
    from jax import core
    from jax.interpreters import ad, batching, mlir

    multiply_add_p = extend_core.Primitive("multiply_add")
    multiply_add_p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    multiply_add_p.def_abstract_eval(
        lambda xs, ys, zs: core.ShapedArray(xs.shape, xs.dtype))

    def multiply_add_prim(x, y, z):
        return multiply_add_p.bind(x, y, z)

    def square_add_prim(a, b):
        return multiply_add_prim(a, a, b)

    def lowering(ctx, xc, yc, zc):
        return [hlo.AddOp(hlo.MulOp(xc, yc), zc).result]
    mlir.register_lowering(multiply_add_p, lowering, platform="cpu")

    def value_and_jvp(arg_values, arg_tangents):
        x, y, z = arg_values
        xt, yt, zt = arg_tangents
        zero = lambda t: lax.full_like(x, 0) if type(t) is ad.Zero else t
        out = multiply_add_prim(x, y, z)
        tangent = multiply_add_prim(zero(xt), y, multiply_add_prim(x, zero(yt), zero(zt)))
        return out, tangent
    ad.primitive_jvps[multiply_add_p] = value_and_jvp

    def transpose(ct, x, y, z):
        if not ad.is_undefined_primal(x):
            ct_y = ad.Zero(y.aval) if type(ct) is ad.Zero else \
                multiply_add_prim(x, ct, lax.full_like(x, 0))
            return None, ct_y, ct
        ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else \
            multiply_add_prim(ct, y, lax.full_like(y, 0))
        return ct_x, None, ct
    ad.primitive_transposes[multiply_add_p] = transpose

    def batch(vector_arg_values, batch_axes):
        assert batch_axes[0] == batch_axes[1] == batch_axes[2]
        return multiply_add_prim(*vector_arg_values), batch_axes[0]
    batching.primitive_batchers[multiply_add_p] = batch

    out = {
        "lax": float(lax.add(lax.mul(2.0, 2.0), 10.0)),
        "eager": float(square_add_prim(2.0, 10.0)),
        "jit": float(api.jit(square_add_prim)(2.0, 10.0)),
        "static": float(api.jit(square_add_prim, static_argnums=1)(2.0, 10.0)),
        "jvp": [float(v) for v in api.jvp(square_add_prim, (2.0, 10.0), (1.0, 1.0))],
        "grad": float(api.grad(square_add_prim)(2.0, 10.0)),
        "jit_grad": float(api.jit(api.grad(square_add_prim))(2.0, 10.0)),
        "vmap": api.vmap(square_add_prim, in_axes=0, out_axes=0)(
            np.array([2.0, 3.0]), np.array([10.0, 20.0])).tolist(),
        "jit_vmap": api.jit(api.vmap(square_add_prim))(
            np.array([2.0, 3.0]), np.array([10.0, 20.0])).tolist(),
    }
    print("RESULT" + json.dumps(out))
""")


def _result(args):
    # (on the CPU: the page registers its lowering rule for the CPU alone, and on a TPU
    # machine this process holds the chip)
    proc = subprocess.run([sys.executable, *args, "-c", PAGE], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


def test_primitives_page_runs_as_under_jax():
    mine = _result(["-m", "mjax"])
    theirs = _result([])
    assert mine == theirs
    assert mine["jit"] == 14.0 and mine["grad"] == 4.0 and mine["vmap"] == [14.0, 29.0]
