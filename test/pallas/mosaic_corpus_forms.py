"""Kernel forms of JAX 0.10.2's own Pallas TPU tests (tests/pallas/tpu_ops_test.py,
tpu_pallas_test.py) that mjax lowered differently from JAX or not at all (issue 55):
gathers, jax.empty_ref in a memory space, vmap inside a kernel, a jit closing over the
kernel's refs. Written once against a `jax`-like module; test_mosaic_forms.py compares
both libraries' Mosaic modules and interpreted values.

`forms(J, pl, pltpu)` -> {name: (f, [(shape, dtype), ...])}.
"""
from __future__ import annotations

import functools

import numpy as np


def forms(J, pl, pltpu) -> dict:
    jnp = J.numpy
    K = {}

    # jnp.take_along_axis along either minor dim: tpu.dynamic_gather (JAX's
    # test_dynamic_gather_along_axis); a negative index wraps, unless promised in bounds
    for idx_shape, axis, mode in (((8, 128), -1, None), ((8, 128), -2, None),
                                  ((2, 32, 256), -1, "promise_in_bounds"),
                                  ((2, 32, 256), -2, None)):
        x_shape = list(idx_shape)
        x_shape[axis] = (8, 128)[axis]

        def gather_kernel(x_ref, i_ref, o_ref, axis=axis, mode=mode):
            o_ref[...] = jnp.take_along_axis(x_ref[...], i_ref[...], axis, mode=mode)

        def gather(x, i, kernel=gather_kernel):
            return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(i.shape, x.dtype))(
                x, i)
        name = f"take_along_axis_{len(idx_shape)}d_axis{axis}" + ("_promise" if mode else "")
        K[name] = (gather, [(tuple(x_shape), np.int32), (idx_shape, np.int32)])

    def float_gather_kernel(x_ref, i_ref, o_ref):     # f32, lanes from reversed indices
        o_ref[...] = jnp.take_along_axis(x_ref[...], 127 - i_ref[...], axis=1,
                                         mode="promise_in_bounds") * 2.0

    K["take_along_axis_f32"] = (
        lambda x, i: pl.pallas_call(float_gather_kernel, out_shape=J.ShapeDtypeStruct(
            i.shape, x.dtype))(x, i), [((8, 128), np.float32), ((8, 128), np.int32)])

    def empty_ref_kernel(y_ref):            # jax.empty_ref in VMEM: memref.alloca
        x_ref = J.empty_ref(J.ShapeDtypeStruct(y_ref.shape, y_ref.dtype),
                            memory_space=pltpu.VMEM)
        x_ref[...] = jnp.ones_like(x_ref)
        y_ref[...] = 4 * x_ref[...]
    # (the empty_ref kernels take `interpret`: JAX's TPU interpreter cannot run them)
    K["empty_ref"] = (lambda interpret=False: pl.pallas_call(
        empty_ref_kernel, interpret=interpret,
        out_shape=J.ShapeDtypeStruct((8, 128), jnp.float32))(), [])
    # (JAX's test_empty_ref_allocation)

    def column_write_kernel(in_ref, out_ref):   # (JAX's test_2d_vmem_column_write)
        scratch = J.empty_ref(J.ShapeDtypeStruct((8, 4), jnp.int32), memory_space=pltpu.VMEM)
        for i in range(4):
            scratch[:8, i] = in_ref[...] + i
        out_ref[...] = scratch[...]
    K["empty_ref_columns"] = (lambda x, interpret=False: pl.pallas_call(
        column_write_kernel, grid=(1,), interpret=interpret, in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        out_shape=J.ShapeDtypeStruct((8, 4), jnp.int32))(x), [((8,), np.int32)])

    def smem_kernel(x_ref, o_ref):          # scalars in an SMEM empty_ref
        s_ref = J.empty_ref(J.ShapeDtypeStruct((2,), jnp.int32), memory_space=pltpu.SMEM)
        s_ref[0] = pl.program_id(0) + 1
        s_ref[1] = s_ref[0] * 3
        o_ref[...] = x_ref[...] * s_ref[1].astype(jnp.float32)
    K["empty_ref_smem"] = (lambda x, interpret=False: pl.pallas_call(
        smem_kernel, grid=(2,), interpret=interpret, in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        out_shape=J.ShapeDtypeStruct((16, 128), jnp.float32))(x), [((16, 128), np.float32)])

    def jit_closure_kernel(x_ref, o_ref):   # jits closing over the kernel's refs: inline
        @J.jit
        def row(i):
            o_ref[pl.ds(i, 1), :] = x_ref[pl.ds(i, 1), :] + i.astype(jnp.float32)

        @J.jit
        def scale(r):                       # a ref argument beside a closed-over one
            o_ref[...] = r[...] * 3.0

        J.jit(lambda: scale(x_ref))()       # (a jit in a jit)

        @pl.loop(0, 8)
        def _(i):
            row(i)
    K["jit_closure"] = (lambda x: pl.pallas_call(jit_closure_kernel, out_shape=(
        J.ShapeDtypeStruct(x.shape, x.dtype)))(x), [((8, 128), np.float32)])

    def vmap_scopes_kernel(x_ref, o_ref):   # vmap inside a kernel: trace_start "vmap"
        def f(r):
            with J.named_scope("inner"):
                return r * 2.0
        with J.named_scope("outer"):        # (outer, vmap, inner: as entered)
            y = J.vmap(f)(x_ref[...])
        o_ref[...] = J.vmap(J.vmap(lambda v: v + 1.0))(y)
    K["vmap_in_kernel_scopes"] = (lambda x: pl.pallas_call(vmap_scopes_kernel, out_shape=(
        J.ShapeDtypeStruct(x.shape, x.dtype)))(x), [((8, 128), np.float32)])

    def vmap_axes_kernel(x_ref, o_ref):     # (in a vmapped pallas_call: its vmap is not)
        o_ref[...] = J.vmap(J.vmap(lambda w: w * 3.0), in_axes=1, out_axes=1)(x_ref[...])
    K["vmap_in_vmapped_kernel"] = (J.vmap(lambda x: pl.pallas_call(
        vmap_axes_kernel, out_shape=J.ShapeDtypeStruct((8, 128), jnp.float32))(x)),
        [((2, 8, 128), np.float32)])

    def bitcast_vmap_kernel(x_ref, o_ref):  # (JAX's tpu_ops_test test_bitcast_vmap, axis 0)
        o_ref[...] = J.vmap(functools.partial(pltpu.bitcast, ty=jnp.uint8))(x_ref[...])
    K["bitcast_vmap"] = (lambda x: pl.pallas_call(bitcast_vmap_kernel, out_shape=(
        J.ShapeDtypeStruct((2, 64, 128), jnp.uint8)))(x), [((2, 16, 128), np.uint32)])
    return K


def bitcast_vmap_axis1(J, pl, pltpu, out_shape):
    """JAX's test_bitcast_vmap with axis 1: a vmap over the second-minor dim."""
    jnp = J.numpy

    def kernel(x_ref, o_ref):
        o_ref[...] = J.vmap(functools.partial(pltpu.bitcast, ty=jnp.uint8), in_axes=1,
                            out_axes=1)(x_ref[...])
    return lambda x: pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(out_shape,
                                                                          jnp.uint8))(x)


def refused(J, pl, pltpu) -> dict:
    """Gathers JAX's Mosaic lowering refuses: {name: (f, shapes, JAX's message)}."""
    jnp = J.numpy
    K = {}

    def call(kernel, out_shape):
        return lambda x, i: pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(
            out_shape, x.dtype))(x, i)

    def take_kernel(x_ref, i_ref, o_ref):             # jnp.take: no batching dims
        o_ref[...] = jnp.take(x_ref[...], i_ref[0], axis=0)
    K["take_rows"] = (call(take_kernel, (8, 128)), [((8, 128), np.float32),
                                                    ((1, 8), np.int32)],
                      "Only take_along_axis-like gathers supported")

    def index_kernel(x_ref, i_ref, o_ref):            # x[idx] of a vector of indices
        o_ref[...] = x_ref[...][i_ref[...]][:, 0]
    K["index_by_vector"] = (call(index_kernel, (8, 128)),
                            [((8, 128), np.float32), ((8, 128), np.int32)],
                            "Only take_along_axis-like gathers supported")

    def major_kernel(x_ref, i_ref, o_ref):            # the third-minor dim
        o_ref[...] = jnp.take_along_axis(x_ref[...], i_ref[...], axis=0)
    K["take_along_major_axis"] = (call(major_kernel, (2, 8, 128)),
                                  [((2, 8, 128), np.int32), ((2, 8, 128), np.int32)],
                                  "Only gathers along the two minormost dimensions "
                                  "supported on TC")

    def clip_kernel(x_ref, i_ref, o_ref):             # mode="clip"
        o_ref[...] = jnp.take_along_axis(x_ref[...], i_ref[...], axis=1, mode="clip")
    K["take_along_axis_clip"] = (call(clip_kernel, (8, 128)),
                                 [((8, 128), np.int32), ((8, 128), np.int32)],
                                 "Unsupported gather")
    return K
