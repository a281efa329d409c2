"""JAX 0.10.2's generic Pallas tests (tests/pallas/pallas_test.py and
pallas_vmap_test.py, their *InterpretTest classes: interpret=True on the CPU) run on
mjax: each kernel (jax_pallas_kernels.py, written once for both libraries) runs in both,
its values compared with JAX's and with NumPy's (the check JAX's test makes), or both
raise the exception class JAX's test expects.

Not ported: what JAX skips on the CPU (the control-flow class, GPU/TPU-only dots and
loads, checkify, the aliasing class, which has no interpret variant, the hijax class);
test_pallas_trace_cache (it counts JAX's kernel traces: mjax traces a kernel once per
call site); the exact wording of the ApiError messages (only their class is checked)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402

import jax_pallas_kernels as K  # noqa: E402

LIBS = {"jax": (jax, jpl), "mjax": (mjax, pl)}
FULL = os.environ.get("MJAX_TEST_TIER") == "full"


def _run(lib, name, variant):
    J, P = LIBS[lib]
    f, args, want = getattr(K, name)(J, P, *variant)
    with J.default_device(J.devices("cpu")[0]):
        if isinstance(want, type) and issubclass(want, Exception):
            with pytest.raises(want):
                np.asarray(J.tree_util.tree_leaves(f(*args)))
            return None, want
        return f(*args), want


def _same(got, ref, *, rtol):
    """The results' structure (a tuple stays a tuple) and values agree; NaNs match."""
    assert type(got) is type(ref) if isinstance(ref, (tuple, list)) else True, (
        type(got), type(ref))
    g, r = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(ref)
    g = mjax.tree_util.tree_leaves(got) if not g or len(g) != len(r) else g
    assert len(g) == len(r)
    for a, b in zip(g, r):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape,
                                                           b.dtype)
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64),
                                       rtol=rtol, atol=rtol, equal_nan=True)


def _check(name, variant, rtol=1e-6, np_tol=1e-5):
    out, want = _run("mjax", name, variant)
    ref, _ = _run("jax", name, variant)
    if isinstance(want, type):
        return
    _same(out, ref, rtol=rtol)
    if want is not None:
        leaves = mjax.tree_util.tree_leaves(out)
        wants = list(want) if isinstance(want, (tuple, list)) else [want]
        assert len(leaves) == len(wants)
        for a, w in zip(leaves, wants):
            np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(w, np.float64),
                                       rtol=np_tol, atol=np_tol, equal_nan=True)


# (JAX test, case, variant)
PLAIN = [
    ("test_add_one", "add_one", ()),
    ("test_add_one_1d", "add_one_1d", ()),
    ("test_add_one_2d", "add_one_2d", ()),
    ("test_add_first", "add_first", ()),
    ("test_add_xy_indexed", "add_xy_indexed", ()),
    ("test_bool_array", "bool_array", ()),
    ("test_no_outputs", "no_outputs", ()),
    ("test_out_shape_is_singleton_tuple", "out_shape_is_singleton_tuple", ()),
    ("test_out_shape_is_list", "out_shape_is_list", ()),
    ("test_out_shape_no_grid", "out_shape_no_grid", ()),
    ("test_out_shape_no_block_spec", "block_spec_variants", ("none",)),
    ("test_block_spec_no_block_shape_and_no_index_map", "block_spec_variants",
     ("no_shape_no_map",)),
    ("test_block_spec_no_block_shape", "block_spec_variants", ("no_shape",)),
    ("test_block_spec_no_index_map", "block_spec_variants", ("no_index_map",)),
    ("test_block_spec_with_padding", "block_spec_with_padding", ((8,), (2,))),
    ("test_block_spec_with_padding", "block_spec_with_padding", ((8,), (3,))),
    ("test_block_spec_with_padding", "block_spec_with_padding", ((3,), (8,))),
    ("test_block_spec_padding_is_nan", "block_spec_padding_is_nan", ("int32",)),
    ("test_block_spec_padding_is_nan", "block_spec_padding_is_nan", ("float32",)),
    ("test_block_spec_mapped_dimension", "block_spec_mapped_dimension", ()),
    ("test_const_args", "const_args", ()),
    ("test_unused_ref", "unused_ref", ()),
    ("test_using_pallas_slice", "using_pallas_slice", ()),
    ("test_pallas_call_under_disable_jit", "pallas_call_under_disable_jit", ()),
    ("test_integer_dot", "integer_dot", ()),
    *[("test_split", "split", v) for v in [((32,), 2, 0), ((32, 64), 4, 0),
                                           ((32, 16), 8, 1), ((32, 16, 2), 16, 1)]],
    ("test_block_spec_element", "block_spec_element",
     ((16, 128), ((8,), (128,)), [0] * 8 + [1] * 8)),
    ("test_block_spec_element", "block_spec_element",
     ((14, 128), ((8, (0, 2)), (128, (0, 0))), [0] * 8 + [1] * 6)),
    ("test_block_spec_element_padding_is_nan", "block_spec_element_padding_is_nan",
     ("int32",)),
    ("test_block_spec_element_padding_is_nan", "block_spec_element_padding_is_nan",
     ("float32",)),
    ("test_element_indexing", "element_indexing", ()),
    ("test_unblocked_indexing_with_padding", "unblocked_indexing_with_padding", ()),
    ("test_interpret_mode_out_of_bounds_access", "out_of_bounds_matmul", (False,)),
    ("test_interpret_mode_out_of_bounds_access", "out_of_bounds_matmul", (True,)),
    ("test_named_grid", "named_grid", (False,)),
    ("test_named_grid_reordered_names", "named_grid", (True,)),
    ("test_can_query_named_grid_size_in_kernel_via_psum", "named_grid", (True, True)),
    ("test_custom_jvp_call", "custom_jvp_call", ()),
    ("(mjax: integer-array ref indices)", "ref_gather_scatter", ()),
    *[(f"test_{w} (pallas_vmap_test)", "vmap_case", (w,)) for w in K.VMAP_CASES],
]

_VALID_SHAPES = [
    ((), ()), ((2,), (2,)), ((128,), (64,)), ((128,), (128,)), ((1024,), (128,)),
    ((2048,), (256,)), ((3072,), (384,)), ((2304,), (1152,)), ((4096,), (2048,)),
    ((256,), (128,), "int16"), ((256,), (256,), "int16"), ((1024,), (256,), "int16"),
    ((2048,), (512,), "int16"), ((3072,), (768,), "int16"), ((2560,), (1280,), "int16"),
    ((512,), (256,), "int8"), ((512,), (512,), "int8"), ((1024,), (512,), "int8"),
    ((2048,), (512,), "int8"), ((3072,), (1536,), "int8"), ((2, 2), (2, 2)),
    ((3, 3), (3, 3)), ((4, 2), (2, 2)), ((6, 2, 2), (2, 2, 2)), ((6, 2, 2), (3, 2, 2)),
    ((16, 128), (8, 128)), ((6, 16, 128), (2, 8, 128)), ((6, 16, 128), (3, 8, 128)),
    ((16, 64), (8, 64)), ((16, 128), (4, 128)), ((16, 128), (2, 128)),
    ((16, 128), (8, 64)), ((9, 128), (9, 64)), ((9, 128), (9, 128)),
    ((18, 128), (9, 128)), ((8, 129), (8, 129)), ((9, 129), (8, 129)),
    ((9, 129), (9, 129)), ((1, 128), (4, 128)), ((2, 128), (4, 128)),
    ((3, 128), (4, 128)), ((5, 128), (8, 128))]
# (the fast tier: a few of each kind; MJAX_TEST_TIER=full runs all of JAX's)
_FAST_SHAPES = {0, 2, 9, 15, 23, 31, 36, 40}
VALID = [v for i, v in enumerate(_VALID_SHAPES) if FULL or i in _FAST_SHAPES]

_MATMULS = [(m, n, 512, d, bm, bn, 32) for m in (512, 1024) for n in (512, 1024)
            for d in ("float32", "float16") for bm in (64, 128) for bn in (64, 128)]
MATMULS = _MATMULS if FULL else [(512, 512, 512, "float32", 128, 128, 32),
                                 (512, 512, 512, "float16", 64, 128, 32)]

API_ERRORS = [
    ("test_pallas_call_kernel_args_mismatch", "kernel_args_mismatch"),
    ("test_pallas_call_error_kernel_returns_something", "kernel_returns_something"),
    ("test_pallas_call_kernel_with_no_signature_returns_something",
     "kernel_no_signature_returns"),
    ("test_pallas_call_in_specs_not_a_sequence", "in_specs_not_a_sequence"),
    ("test_pallas_call_in_specs_mismatch_inputs", "in_specs_mismatch_inputs"),
    ("test_pallas_call_index_map_wrong_number_of_arguments",
     "index_map_wrong_number_of_arguments"),
    ("test_pallas_call_index_map_wrong_number_of_results",
     "index_map_wrong_number_of_results"),
    ("test_pallas_call_index_map_pytree_input_wrong_number_of_results",
     "index_map_pytree_wrong_number_of_results"),
    ("test_pallas_call_index_map_wrong_return_type", "index_map_wrong_return_type"),
    ("test_pallas_call_index_map_wrong_return_shape", "index_map_wrong_return_shape"),
    ("test_pallas_call_index_map_captures_consts", "index_map_captures_consts"),
    ("test_pallas_call_out_specs_mismatch_shape", "out_specs_mismatch_shape"),
    ("test_pallas_call_block_shape_ndim_mismatch", "block_shape_ndim_mismatch_in"),
    ("test_pallas_call_block_shape_ndim_mismatch", "block_shape_ndim_mismatch_out"),
    ("test_pallas_call_input_output_aliases_errors", "aliases_input_out_of_range"),
    ("test_pallas_call_input_output_aliases_errors", "aliases_output_out_of_range"),
    ("test_pallas_call_input_output_aliases_errors", "aliases_shape_mismatch"),
    ("test_pallas_call_input_output_aliases_errors", "aliases_dtype_mismatch"),
    ("test_pallas_error_for_ref_to_jax", "ref_to_jax"),
    ("test_pallas_error_for_writing_ref_to_ref", "writing_ref_to_ref"),
]


@pytest.mark.parametrize("test,case,variant", PLAIN, ids=lambda v: str(v))
def test_jax_pallas_test(test, case, variant):
    _check(case, variant)


@pytest.mark.parametrize("variant", VALID, ids=str)
def test_block_spec_valid_block_shapes(variant):
    _check("block_spec_valid_block_shapes", variant)


@pytest.mark.parametrize("variant", MATMULS, ids=str)
def test_matmul_block_spec(variant):
    # (JAX's test: the float32 product cast to the dtype, within 0.05)
    _check("matmul_block_spec", variant, rtol=1e-5, np_tol=0.05)


@pytest.mark.parametrize("test,which", API_ERRORS, ids=lambda v: str(v))
def test_api_errors(test, which):
    _check("api_error", (which,))


@pytest.mark.parametrize("impl", K.AD_IMPLS)
@pytest.mark.parametrize("case", ["jvp", "pallas_around_grad", "jvp_slice"])
def test_autodiff(case, impl):
    # (JAX's test: against jax.jvp/jax.grad of the function itself, within 1e-5)
    _check(case, (impl,), rtol=1e-5)
