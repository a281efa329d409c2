"""Array layouts (mjax.experimental.layout: Layout, Format), compared with JAX: the
classes, `Array.format`, jit with Formats as in/out shardings, `device_put` to a Format,
what a compiled program reports (`input_formats`/`output_formats`), and that a layout is
real: the device buffer's bytes are in that order and values stay right."""
from __future__ import annotations

import ctypes
import os
import re

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.experimental.layout import Format, Layout, with_layout_constraint
from mjax.sharding import SingleDeviceSharding

from frontend_util import ON_TPU

if os.environ.get("MJAX_BACKEND", "").lower().startswith("iree"):
    pytest.skip("layouts are XLA's (PJRT buffer layouts); IREE has none",
                allow_module_level=True)

A = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(scope="module")
def jx():
    import jax
    import jax.experimental.layout as jl
    from jax.sharding import SingleDeviceSharding as JSingle
    return jax, jl, JSingle


def raw(x) -> np.ndarray:
    """The buffer's elements in memory order (CPU). On a TPU the buffer is device memory
    (tiled, and its pointer a device address): the test stops here, as a skip, having
    checked everything before."""
    if ON_TPU:
        pytest.skip("TPU: reads a buffer's bytes through unsafe_buffer_pointer, which on "
                    "a TPU is a device address")
    n = int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize
    ptr = x.unsafe_buffer_pointer()
    return np.frombuffer((ctypes.c_uint8 * n).from_address(ptr), np.uint8).copy().view(
        np.dtype(x.dtype))


def col():
    return Format(Layout(major_to_minor=(1, 0)), SingleDeviceSharding(mjax.devices()[0]))


def jcol(jx):
    jax, jl, JSingle = jx
    return jl.Format(jl.Layout(major_to_minor=(1, 0)), JSingle(jax.devices()[0]))


# ---- the classes -----------------------------------------------------------------------
def test_layout_and_format_reprs_and_equality_match_jax(jx):
    _, jl, _ = jx
    for args in [((1, 0),), ((0, 1, 2), ((2,),)), ((1, 0), None, 4)]:
        assert repr(Layout(*args)) == repr(jl.Layout(*args))
        assert Layout(*args) == Layout(*args) and hash(Layout(*args)) == hash(Layout(*args))
    assert Layout((1, 0)) != Layout((1, 0), ())
    assert repr(Layout.AUTO) == repr(jl.Layout.AUTO) == "AUTO"
    assert repr(Format()) == repr(jl.Format())
    assert repr(Format(Layout.AUTO)) == repr(jl.Format(jl.Layout.AUTO))
    assert Layout((1, 0)).update(tiling=((8,),)) == Layout((1, 0), ((8,),))
    assert Format(Layout.AUTO) == Format(Layout.AUTO) and Format() != Format(Layout.AUTO)


def test_format_validation_errors_match_jax(jx):
    _, jl, _ = jx
    for bad in [lambda m: m.Format(m.Layout((1, 0))), lambda m: m.Format("x"),
                lambda m: m.Format(None, "cpu")]:
        with pytest.raises(Exception) as theirs:
            bad(jl)
        with pytest.raises(type(theirs.value)) as ours:
            bad(mjax.experimental.layout)
        assert str(ours.value).split(" of type")[0].split(" <class")[0] == \
            str(theirs.value).split(" of type")[0].split(" <class")[0]


# ---- Array.format and device_put --------------------------------------------------------
def test_array_format_of_a_default_array_matches_jax(jx):
    jax = jx[0]
    assert repr(jnp.ones((4, 8)).format) == repr(jax.numpy.ones((4, 8)).format)
    assert repr(jnp.float32(2).format) == repr(jax.numpy.float32(2).format)


def test_device_put_to_a_column_major_format_lays_the_buffer_out_so(jx):
    jax = jx[0]
    ours, theirs = mjax.device_put(A, col()), jax.device_put(A, jcol(jx))
    assert repr(ours.format) == repr(theirs.format)
    assert ours.format.layout.major_to_minor == (1, 0)
    # The bytes on the device are column-major, as JAX's.
    np.testing.assert_array_equal(raw(ours), A.ravel(order="F"))
    np.testing.assert_array_equal(raw(ours), raw(theirs))
    np.testing.assert_array_equal(np.asarray(ours), A)
    assert ours.committed and ours.sharding == SingleDeviceSharding(mjax.devices()[0])
    # Putting it to its own format is a no-op (not to an equal layout without tiling, as
    # in JAX); to the default layout copies it back.
    assert mjax.device_put(ours, ours.format) is ours
    assert (mjax.device_put(ours, col()) is ours) == (jax.device_put(theirs, jcol(jx)) is theirs)
    back = mjax.device_put(ours, Format(Layout((0, 1)), ours.sharding))
    np.testing.assert_array_equal(raw(back), A.ravel())


def test_computations_on_a_column_major_array_read_it_right(jx):
    jax = jx[0]
    x = mjax.device_put(A, col())
    y = jax.device_put(A, jcol(jx))
    for f, g in [(lambda v: v + 1, lambda v: v + 1),
                 (mjax.jit(lambda v: (v * 2).sum(0)), jax.jit(lambda v: (v * 2).sum(0))),
                 (lambda v: jnp.dot(v, v.T), lambda v: jax.numpy.dot(v, v.T)),
                 (lambda v: v[1], lambda v: v[1])]:
        ours, theirs = f(x), g(y)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs))
        assert repr(ours.format.layout) == repr(theirs.format.layout)
    # (twice: the second call of a jit takes its cached path)
    h = mjax.jit(lambda v: v - 1)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(h(x)), A - 1)


# ---- jit with Formats ---------------------------------------------------------------------
def test_jit_with_formats_compiles_for_them_and_reports_them_as_jax(jx):
    jax = jx[0]
    ours = mjax.jit(lambda v: v * 2, in_shardings=col(), out_shardings=col()).lower(A)
    theirs = jax.jit(lambda v: v * 2, in_shardings=jcol(jx), out_shardings=jcol(jx)).lower(A)
    assert 'mhlo.layout_mode = "{0,1}"' in ours.as_text()
    assert 'mhlo.layout_mode = "{0,1}"' in theirs.as_text()
    oc, tc = ours.compile(), theirs.compile()
    assert repr(oc.input_formats) == repr(tc.input_formats)
    assert repr(oc.output_formats) == repr(tc.output_formats)
    entry = re.compile(r"entry_computation_layout=\{\((.*?)\)->(\w+\[[\d,]*\]\{[^}]*\})")
    assert entry.search(oc.as_text()).groups() == entry.search(tc.as_text()).groups()
    if not ON_TPU:     # (a TPU's layouts carry tiles: "{0,1:T(2,128)}")
        assert entry.search(oc.as_text()).groups() == ("f32[2,3]{0,1}", "f32[2,3]{0,1}")
    # Uncommitted arguments are copied into the layout; the result is column-major.
    for arg in (A, jnp.asarray(A)):
        out = oc(arg)
        assert repr(out.format) == repr(tc(A).format)
        np.testing.assert_array_equal(raw(out), (A * 2).ravel(order="F"))
        np.testing.assert_array_equal(np.asarray(out), A * 2)
    out = oc(mjax.device_put(A, col()))
    np.testing.assert_array_equal(np.asarray(out), A * 2)


def test_compiled_refuses_a_committed_argument_in_another_layout(jx):
    jax = jx[0]
    oc = mjax.jit(lambda v: v * 2, in_shardings=col()).lower(A).compile()
    tc = jax.jit(lambda v: v * 2, in_shardings=jcol(jx)).lower(A).compile()
    with pytest.raises(ValueError) as theirs:
        tc(jax.device_put(A, jax.devices()[0]))
    with pytest.raises(ValueError) as ours:
        oc(mjax.device_put(A, mjax.devices()[0]))
    assert str(ours.value) == str(theirs.value)
    assert "Computation was compiled for input layouts that disagree" in str(ours.value)
    # (arguments in pytrees are named by their paths, as JAX does)
    oc = mjax.jit(lambda y, d: d["a"] * y, in_shardings=(None, col())).lower(
        A, {"a": A}).compile()
    tc = jax.jit(lambda y, d: d["a"] * y, in_shardings=(None, jcol(jx))).lower(
        A, {"a": A}).compile()
    with pytest.raises(ValueError) as theirs:
        tc(A, {"a": jax.device_put(A, jax.devices()[0])})
    with pytest.raises(ValueError) as ours:
        oc(A, {"a": mjax.device_put(A, mjax.devices()[0])})
    assert str(ours.value) == str(theirs.value)


def test_jit_call_with_formats(jx):
    jax = jx[0]
    f = mjax.jit(lambda v: v * 2, in_shardings=col(), out_shardings=col())
    g = jax.jit(lambda v: v * 2, in_shardings=jcol(jx), out_shardings=jcol(jx))
    for _ in range(2):
        ours, theirs = f(A), g(A)
        assert repr(ours.format) == repr(theirs.format)
        np.testing.assert_array_equal(raw(ours), raw(theirs))
    with pytest.raises(ValueError) as theirs:
        g(jax.device_put(A, jax.devices()[0]))
    with pytest.raises(ValueError) as ours:
        f(mjax.device_put(A, mjax.devices()[0]))
    assert str(ours.value) == str(theirs.value)


def test_auto_layouts_are_what_xla_cpu_chooses_as_in_jax(jx):
    jax, jl, _ = jx
    shape = (4 * 128, 8 * 128)
    ours = mjax.jit(lambda x, y: (x[0, :], y[:, 0]), in_shardings=Format(Layout.AUTO),
                    out_shardings=Format(Layout.AUTO)).trace(
        mjax.ShapeDtypeStruct(shape, jnp.float32), mjax.ShapeDtypeStruct(shape, jnp.float32))
    theirs = jax.jit(lambda x, y: (x[0, :], y[:, 0]), in_shardings=jl.Format(jl.Layout.AUTO),
                     out_shardings=jl.Format(jl.Layout.AUTO)).trace(
        jax.ShapeDtypeStruct(shape, np.float32), jax.ShapeDtypeStruct(shape, np.float32))
    assert ours.lower().as_text().count('mhlo.layout_mode = "auto"') == 4
    oc, tc = ours.lower().compile(), theirs.lower().compile()
    assert repr(oc.input_formats) == repr(tc.input_formats)
    assert repr(oc.output_formats) == repr(tc.output_formats)
    # A program compiled for the formats another one reports (the tutorial's init/apply)
    arg_formats, _ = oc.input_formats
    init = mjax.jit(lambda x, y: (x * 2, y * 3), out_shardings=arg_formats).trace(
        mjax.ShapeDtypeStruct(shape, jnp.float32),
        mjax.ShapeDtypeStruct(shape, jnp.float32)).lower().compile()
    assert init.output_formats == arg_formats
    x2, y2 = init(jnp.ones(shape), jnp.ones(shape))
    a, b = oc(x2, y2)
    np.testing.assert_array_equal(np.asarray(a), np.full(shape[1], 2.0))
    np.testing.assert_array_equal(np.asarray(b), np.full(shape[0], 3.0))


def test_rank_mismatch_is_refused():
    with pytest.raises(ValueError, match="Length of major_to_minor and the rank"):
        mjax.device_put(A, Format(Layout((0, 1, 2)), SingleDeviceSharding(mjax.devices()[0])))


# ---- with_layout_constraint ------------------------------------------------------------------
def test_with_layout_constraint_on_arrays(jx):
    jax, jl, _ = jx
    ours = with_layout_constraint(jnp.asarray(A), Layout((1, 0)))
    theirs = jl.with_layout_constraint(jax.numpy.asarray(A), jl.Layout((1, 0)))
    assert repr(ours.format) == repr(theirs.format)
    np.testing.assert_array_equal(raw(ours), raw(theirs))
    with pytest.raises(ValueError, match="must be of type `Layout`"):
        with_layout_constraint(jnp.asarray(A), Format())


def test_with_layout_constraint_in_jit_lowers_as_jax_and_keeps_values(jx):
    jax, jl, _ = jx
    ours = mjax.jit(lambda x: with_layout_constraint(x.T, Layout((0, 1))) * 2)
    theirs = jax.jit(lambda x: jl.with_layout_constraint(x.T, jl.Layout((0, 1))) * 2)
    call = re.compile(r"stablehlo\.custom_call @LayoutConstraint\(%\w+\) \{[^}]*\}")
    assert call.search(ours.lower(A).as_text()).group().split("(")[1:] == \
        call.search(theirs.lower(A).as_text()).group().split("(")[1:]
    np.testing.assert_array_equal(np.asarray(ours(A)), np.asarray(theirs(A)))
    assert repr(ours(A).format) == repr(theirs(A).format)


def test_a_result_that_is_a_layout_constraint_keeps_its_layout_as_in_jax(jx):
    jax, jl, _ = jx
    ours = mjax.jit(lambda x: with_layout_constraint(x.T, Layout((1, 0))))
    theirs = jax.jit(lambda x: jl.with_layout_constraint(x.T, jl.Layout((1, 0))))
    assert 'mhlo.layout_mode = "auto"' in ours.lower(A).as_text()
    assert repr(ours.lower(A).compile().output_formats) == \
        repr(theirs.lower(A).compile().output_formats)
    out = ours(A)
    assert repr(out.format) == repr(theirs(A).format)
    np.testing.assert_array_equal(raw(out), raw(theirs(A)))
    np.testing.assert_array_equal(np.asarray(out), A.T)
    np.testing.assert_array_equal(np.asarray(out + 1), A.T + 1)


def test_with_layout_constraint_under_grad_and_vmap(jx):
    jax, jl, _ = jx
    x3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def f(m, wlc, L):
        return lambda x: (m.numpy.sin(wlc(x, L((1, 0)))) ** 2).sum()
    ours = f(mjax, with_layout_constraint, Layout)
    theirs = f(jax, jl.with_layout_constraint, jl.Layout)
    np.testing.assert_allclose(np.asarray(mjax.jit(mjax.grad(ours))(A)),
                               np.asarray(jax.jit(jax.grad(theirs))(A)), rtol=1e-6)
    for axis in (0, 1):
        np.testing.assert_allclose(
            np.asarray(mjax.jit(mjax.vmap(ours, in_axes=axis))(x3)),
            np.asarray(jax.jit(jax.vmap(theirs, in_axes=axis))(x3)), rtol=1e-6)
    with pytest.raises(TypeError, match="not a permutation"):
        mjax.jit(lambda x: with_layout_constraint(x, Layout((0, 0))))(A)


def test_layouts_over_several_devices():
    mesh = mjax.make_mesh((4, 2), ("x", "y"))
    x8 = np.arange(32, dtype=np.float32).reshape(8, 4)
    z = mjax.device_put(x8, Format(Layout((0, 1)), mjax.sharding.NamedSharding(
        mesh, mjax.sharding.PartitionSpec("x"))))
    assert z.format.layout.major_to_minor == (0, 1)
    np.testing.assert_array_equal(np.asarray(z * 2), x8 * 2)
    # a non-default layout over several devices: each shard copied into it
    s = mjax.sharding.NamedSharding(mesh, mjax.sharding.PartitionSpec("x", "y"))
    w = mjax.device_put(mjax.device_put(x8, s), Format(Layout((0, 1)), s))
    assert w.format.layout.major_to_minor == (0, 1) and w.sharding == s
    for shard in w.addressable_shards:
        assert shard.data.format.layout.major_to_minor == (0, 1)
        np.testing.assert_array_equal(np.asarray(shard.data), x8[shard.index])
    np.testing.assert_array_equal(np.asarray(mjax.jit(lambda a: a * 3 + 1)(w)), x8 * 3 + 1)


def test_auto_layout_and_committed_arguments_as_jax(jx):
    jax, jl, _ = jx
    f = mjax.jit(lambda x: x * 2, in_shardings=Format(Layout.AUTO),
                 out_shardings=Format(Layout.AUTO))
    g = jax.jit(lambda x: x * 2, in_shardings=jl.Format(jl.Layout.AUTO),
                out_shardings=jl.Format(jl.Layout.AUTO))
    for ours, theirs in [(A, A), (jnp.asarray(A), jax.numpy.asarray(A))]:
        assert repr(f(ours).format) == repr(g(theirs).format)
    with pytest.raises(ValueError) as theirs:
        g(jax.device_put(A, jax.devices()[0]))
    with pytest.raises(ValueError) as ours:
        f(mjax.device_put(A, mjax.devices()[0]))
    assert str(ours.value) == str(theirs.value)


def test_formats_of_a_program_without_layouts_match_jax(jx):
    jax = jx[0]
    for fun in (lambda x: x.T, lambda x: {"a": x, "b": (x[0], 2 * x)}):
        ours, theirs = mjax.jit(fun).lower(A).compile(), jax.jit(fun).lower(A).compile()
        assert repr(ours.input_formats) == repr(theirs.input_formats)
        assert repr(ours.output_formats) == repr(theirs.output_formats)


def test_deleted_arrays_once_layouts_are_in_use():
    # Once a layout is in use, every execution reads its arguments' layouts; a deleted
    # one (whose layout jaxlib cannot read) still gets the usual errors.
    mjax.device_put(A, col())
    f = mjax.jit(lambda v: v + 1)
    for fast in (True, False):
        x = jnp.asarray(A)
        f(x), f(x)
        x.delete()
        with pytest.raises((RuntimeError, ValueError), match="deleted"):
            f(x) if fast else f._call((x,), {})
        with pytest.raises(RuntimeError, match="deleted"):
            x + 1
        with pytest.raises(RuntimeError, match="deleted"):
            x.format


def test_compiled_for_default_layouts_refuses_a_committed_column_major_argument(jx):
    # (compiled with Formats that resolve to the default layout: JAX still checks)
    jax, jl, _ = jx
    oc = mjax.jit(lambda v: v[0, :], in_shardings=Format(Layout.AUTO)).trace(
        mjax.ShapeDtypeStruct(A.shape, A.dtype)).lower().compile()
    tc = jax.jit(lambda v: v[0, :], in_shardings=jl.Format(jl.Layout.AUTO)).trace(
        jax.ShapeDtypeStruct(A.shape, A.dtype)).lower().compile()
    with pytest.raises(ValueError) as theirs:
        tc(jax.device_put(A, jcol(jx)))
    with pytest.raises(ValueError) as ours:
        oc(mjax.device_put(A, col()))
    assert str(ours.value) == str(theirs.value)
    # an uncommitted one, or a committed one in the default layout, runs
    np.testing.assert_array_equal(oc(jnp.asarray(A)), A[0])
    np.testing.assert_array_equal(oc(mjax.device_put(A, mjax.devices()[0])), A[0])
    np.testing.assert_array_equal(tc(jax.device_put(A, jax.devices()[0])), A[0])


def test_tiled_layouts_are_written_as_xla_spells_them():
    # (TPU layouts carry tiles; jit with such a Format writes them into mhlo.layout_mode)
    import ml_dtypes
    from jaxlib import xla_client as xc
    from mjax.specs.layout import layout_text
    cases = [((1, 0), None, 0, np.float32, 0), ((0, 1), ((8, 128),), 0, np.float32, 0),
             ((1, 0), ((8, 128), (2, 1)), 0, ml_dtypes.int4, 4), ((1, 0), (), 0, np.float32, 0),
             ((1, 0), ((8,),), 4, np.int8, 4), ((1, 0), (), 0, ml_dtypes.uint2, 2)]
    for m2m, tiling, bits, dtype, xla_bits in cases:
        want = (xc.Layout(m2m[::-1]) if tiling is None
                else xc.Layout(m2m[::-1], tiling, xla_bits))
        assert layout_text(Layout(m2m, tiling, bits), np.dtype(dtype)) == str(want)
    tiled = Format(Layout((0, 1), ((8, 128),)), SingleDeviceSharding(mjax.devices()[0]))
    text = mjax.jit(lambda v: v * 2, in_shardings=tiled).trace(A).lower(
        lowering_platforms=("tpu",)).as_text()
    assert 'mhlo.layout_mode = "{1,0:T(8,128)}"' in text
