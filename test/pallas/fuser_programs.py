"""Programs over the Pallas fuser API, written once against a module set (`ns`: jax or
mjax with their numpy, lax, pallas, pallas.tpu and fuser) so test_fuser*.py run the same
program with JAX (the oracle) and with mjax. The fusible matmul is in the style of JAX's
tests/pallas/tpu_fusible_matmul_test.py (its pallas_call form, run interpreted)."""
from __future__ import annotations

import functools
import types


def namespace(lib: str) -> types.SimpleNamespace:
    if lib == "jax":
        import jax
        import jax.numpy as jnp
        from jax import lax
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import fuser
        from jax.experimental.pallas import tpu as pltpu
    else:
        import mjax as jax
        import mjax.numpy as jnp
        from mjax import lax
        from mjax.experimental import pallas as pl
        from mjax.experimental.pallas import fuser
        from mjax.experimental.pallas import tpu as pltpu
    return types.SimpleNamespace(jax=jax, jnp=jnp, lax=lax, pl=pl, pltpu=pltpu,
                                 fuser=fuser)


def _matmul_kernel(ns, x_sp, y_sp, z_sp, x_refs, y_refs, z_refs, o_ref, acc_ref, *,
                   x_fn, y_fn, z_fn, out_dtype):
    pl, jnp, jax = ns.pl, ns.jnp, ns.jax

    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    pids = pl.program_id(0), pl.program_id(1), pl.program_id(2)
    sp = (x_sp, y_sp, z_sp)
    x = x_fn(pids, sp, jax.tree.map(lambda r: r[...], x_refs))
    y = y_fn(pids, sp, jax.tree.map(lambda r: r[...], y_refs))
    acc_ref[...] += jnp.dot(x, y, preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        acc = acc_ref[...].astype(out_dtype)
        out = z_fn(pids, sp, jax.tree.map(lambda r: r[...], z_refs), acc)
        jax.tree.map(lambda r, v: r.__setitem__(Ellipsis, v), o_ref, out)


def _types_without_refs(ns, values):
    jax = ns.jax
    return jax.tree.map(
        lambda v: v.inner_aval if isinstance(v, jax.ref.AbstractRef) else v,
        jax.tree.map(jax.typeof, values))


def _fusible_matmul(ns, x, y, z, *, bm, bk, bn, record=None, stateful=False,
                    interpret=True):
    jax, jnp, pl, pltpu, fuser = ns.jax, ns.jnp, ns.pl, ns.pltpu, ns.fuser
    m, k = x.shape
    _, n = y.shape
    out_dtype = jnp.float32
    z_type = jax.ShapeDtypeStruct((m, n), dtype=out_dtype)
    if not z:
        z = lambda v: v
    grid = (m // bm, n // bn, k // bk)
    x_spec = pl.BlockSpec((bm, bk), lambda i, j, kk, *_: (i, kk))
    y_spec = pl.BlockSpec((bk, bn), lambda i, j, kk, *_: (kk, j))
    z_spec = pl.BlockSpec((bm, bn), lambda i, j, kk, *_: (i, j))
    z_out_type = jax.eval_shape(z, z_type)

    if stateful:      # (fusions reading Refs: the values hold the Refs)
        x_fn, x_values, x_sp = fuser.get_stateful_input_fusion_values(x)
        y_fn, y_values, y_sp = fuser.get_stateful_input_fusion_values(y)
        z_fn, z_values, z_sp, aliases = fuser.get_stateful_output_fusion_values(
            z, z_type)
        written = [z_values[o] for o in aliases.values()]
        if any(any(v is w for v in x_values + y_values) for w in written):
            raise ValueError("fusible_matmul does not support an input fusion reading "
                             "from a Ref that is also written by the output fusion")
        z_out_type = jax.eval_shape(z_fn, _types_without_refs(ns, z_values), z_type)
        x_args, y_args, z_args = (_types_without_refs(ns, v)
                                  for v in (x_values, y_values, z_values))
    else:
        x_fn, x_values, x_sp = fuser.get_fusion_values(x)
        y_fn, y_values, y_sp = fuser.get_fusion_values(y)
        z_fn, z_values, z_sp = fuser.get_fusion_values(z, z_type)
        x_args, y_args, z_args = x_values, y_values, z_values
    sp = (x_sp, y_sp, z_sp)
    if record is not None:     # (what each fusion reads: the test compares with JAX's)
        record.append([[tuple(v.shape) for v in vals] for vals in
                       (x_values, y_values, z_values, x_sp, y_sp, z_sp)])
    x_fn, (x_specs,), _ = fuser.pull_block_spec(
        x_fn, x_spec, scalar_prefetch_handler=fuser.make_scalar_prefetch_handler(0),
        grid_len=len(grid))(x_args)
    y_fn, (y_specs,), _ = fuser.pull_block_spec(
        y_fn, y_spec, scalar_prefetch_handler=fuser.make_scalar_prefetch_handler(1),
        grid_len=len(grid))(y_args)
    if stateful:
        z_out_spec = fuser.push_block_spec(
            z_fn, tuple([pl.no_block_spec] * len(z_values)), z_spec)(z_args, z_type)
    else:
        z_out_spec = fuser.push_block_spec(z, z_spec)(z_type)
    z_fn, (z_specs, _), _ = fuser.pull_block_spec(
        z_fn, z_out_spec, scalar_prefetch_handler=fuser.make_scalar_prefetch_handler(2),
        grid_len=len(grid))(z_args, z_type)
    sp = jax.tree.map(lambda v: v[None], sp)
    read = lambda v: v[...] if isinstance(v, jax.ref.Ref) else v
    refs = z_values
    x_values, y_values, z_values = jax.tree.map(read, (x_values, y_values, z_values))
    aliases = aliases if stateful else {}
    shift = len(jax.tree.leaves((sp, x_values, y_values)))
    out = pl.pallas_call(
        functools.partial(_matmul_kernel, ns, x_fn=x_fn, y_fn=y_fn, z_fn=z_fn,
                          out_dtype=out_dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=len(sp), grid=grid,
            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
            in_specs=[x_specs, y_specs, z_specs], out_specs=[z_out_spec]),
        out_shape=[z_out_type], interpret=interpret,
        input_output_aliases={shift + i: o for o, i in aliases.items()},
    )(*sp, x_values, y_values, z_values)[0]
    if aliases:       # (the Refs the output fusion writes get their new values)
        flat = jax.tree.leaves(out)
        for o, i in aliases.items():
            refs[i][...] = flat[o]
        return tuple(v for o, v in enumerate(flat) if o not in aliases)
    return out


def fusible_matmul(ns, x, y, *, bm=8, bk=128, bn=128, record=None, stateful=False,
                   interpret=True):
    return ns.fuser.fusible(functools.partial(_fusible_matmul, ns, bm=bm, bk=bk, bn=bn,
                                              record=record, stateful=stateful,
                                              interpret=interpret))(x, y)


def ref_writer(ns, seen):
    """A fusible whose output fusion may write Refs: it computes them from the fusion's
    pure function and writes them back, as tpu_fusible_matmul_with_stateful_fusions_test's
    matmul does after its kernel."""
    jax, fuser = ns.jax, ns.fuser

    @fuser.fusible
    def f(x_fn, z_fn):
        acc = x_fn() * 2
        z_fn = z_fn or (lambda v: v)
        fn, values, sps, aliases = fuser.get_stateful_output_fusion_values(
            z_fn, jax.ShapeDtypeStruct(acc.shape, acc.dtype))
        seen.append((len(values), [isinstance(v, jax.ref.Ref) for v in values], len(sps),
                     dict(aliases)))
        out = fn(tuple(v[...] if isinstance(v, jax.ref.Ref) else v for v in values), acc)
        flat = jax.tree.leaves(out)
        for o, i in aliases.items():
            values[i][...] = flat[o]
        if not aliases:
            return out
        return tuple(v for o, v in enumerate(flat) if o not in aliases)
    return f
