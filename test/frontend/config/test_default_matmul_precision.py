"""`jax_default_matmul_precision` reaches the dots that differentiation and batching rules
make, as in JAX: there a rule's dot bound with precision=None reads the option when the
rule runs (at trace time); mjax runs its rules later, in the passes, so the frontend
records the value on the ops whose rules make such dots (passes/default_precision.py).

Each case lowers grad(f) and vmap(grad(f)) in both libraries, for the CPU and for a TPU
(where DEFAULT multiplies in bfloat16 passes), with the option set globally, by the
context manager around the trace, and by one inside the function, and compares the
dot_generals (precision, dimension numbers, types) of the StableHLO."""
from __future__ import annotations

import collections
import contextlib
import itertools

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

from test_tpu_lowering import ops_that_matter  # (rootdir-relative, as the suite does)

LIBS = {"mjax": (mjax, mjnp), "jax": (jax, jjnp)}
OPTION = "jax_default_matmul_precision"
_rng = np.random.default_rng(0)


def _mat(m, n=None):
    return _rng.standard_normal((m, n or m)).astype(np.float32)


def _spd(n):
    x = _mat(n)
    return (x @ x.T + n * np.eye(n)).astype(np.float32)


# name -> (f(lib, jnp) -> a scalar function of one matrix, its argument)
FUNCS = {
    "qr": (lambda lib, jnp: lambda a: (lambda q, r: jnp.sum(q) + jnp.sum(r ** 2))(
        *jnp.linalg.qr(a)), _mat(5, 3)),
    "qr_wide": (lambda lib, jnp: lambda a: (lambda q, r: jnp.sum(q ** 2) + jnp.sum(r))(
        *jnp.linalg.qr(a)), _mat(3, 5)),
    "eigh": (lambda lib, jnp: lambda a: (lambda w, v: jnp.sum(w) + jnp.sum(v[:, 0] ** 2))(
        *jnp.linalg.eigh(a)), _mat(4)),
    "cholesky": (lambda lib, jnp: lambda a: jnp.sum(jnp.linalg.cholesky(a)), _spd(4)),
    "triangular_solve": (lambda lib, jnp: lambda a: jnp.sum(lib.lax.linalg.triangular_solve(
        a, jnp.ones((4, 3)), left_side=True, lower=True)), _spd(4)),
    "lu": (lambda lib, jnp: lambda a: jnp.sum(lib.lax.linalg.lu(a)[0] ** 2), _mat(4)),
    "matmul": (lambda lib, jnp: lambda a: jnp.sum(jnp.tanh(a @ a.T) @ a), _mat(4, 3)),
}

# how the option is set: globally (as JAX_DEFAULT_MATMUL_PRECISION sets it), by the
# context manager around the trace and lowering, around the trace only (`jit(f).trace(x)`
# under it, `.lower()` after it: JAX lowers that trace), or by one inside the function
MODES = ("highest", "float32", "bfloat16", "context", "traced_in_context", "inside", None)


@contextlib.contextmanager
def _option(lib, value):
    before = lib.config.read(OPTION) if lib is mjax else getattr(lib.config, OPTION)
    lib.config.update(OPTION, value)
    try:
        yield
    finally:
        lib.config.update(OPTION, before)


def _program(lib_name, name, transform, mode, platform) -> str:
    lib, jnp = LIBS[lib_name]
    make, x = FUNCS[name]
    f = make(lib, jnp)
    mode = mode or "unset"
    if mode == "inside":
        inner = f

        def f(a):
            with lib.default_matmul_precision("highest"):
                return inner(a)
    g = lib.grad(f)
    if transform == "vmap_grad":
        g, x = lib.vmap(g), np.stack([x, x + np.float32(0.5) * np.eye(*x.shape, dtype=x.dtype)])
    return _lower(lib, g, x, mode, platform)


def _lower(lib, g, x, mode, platform) -> str:
    scope = (_option(lib, mode) if mode in ("highest", "float32", "bfloat16") else
             lib.default_matmul_precision("highest") if "context" in mode else
             contextlib.nullcontext())
    with scope:
        traced = lib.jit(g).trace(x)
        if mode != "traced_in_context":
            return traced.lower(lowering_platforms=(platform,)).as_text()
    return traced.lower(lowering_platforms=(platform,)).as_text()


def _dots(text: str) -> collections.Counter:
    return collections.Counter({k: v for k, v in ops_that_matter(text).items()
                                if k.startswith("dot_general")})


# (two cases, each over every function, mode and platform: the fast tier runs them all;
# 10 s in all)
@pytest.mark.parametrize("transform", ["grad", "vmap_grad"])
def test_rule_dots_read_the_default_precision_as_in_jax(transform):
    problems = []
    for name, platform, mode in itertools.product(sorted(FUNCS), ("cpu", "tpu"), MODES):
        mine, theirs = (_dots(_program(lib, name, transform, mode, platform))
                        for lib in ("mjax", "jax"))
        if mine != theirs:
            problems.append(f"{transform}({name}), {platform}, option {mode}:\n" + "\n".join(
                [f"  mjax only: {k} x{v}" for k, v in (mine - theirs).items()] +
                [f"  jax only:  {k} x{v}" for k, v in (theirs - mine).items()]))
    assert not problems, "\n".join(problems)


def _custom_vjp(lib, jnp):
    @lib.custom_vjp
    def f(a):
        return jnp.sum(a @ a)

    def bwd(a, g):
        return (g * (a @ a.T + a.T @ a),)
    f.defvjp(lambda a: (f(a), a), bwd)
    return f


def test_custom_vjp_bwd_traced_when_lowering_reads_the_trace_options():
    # (mjax traces a custom_vjp's bwd rule in the passes, when lowering; JAX when
    # differentiating: its dots read the option the trace was made under)
    x = FUNCS["lu"][1]
    for platform, mode in itertools.product(("cpu", "tpu"), MODES):
        mine, theirs = (_dots(_lower(lib, lib.grad(_custom_vjp(lib, jnp)), x, mode or
                                     "unset", platform))
                        for lib, jnp in LIBS.values())
        assert mine == theirs, (platform, mode, mine, theirs)
