"""pl.debug_print and jax.debug.print inside a Pallas TPU kernel against JAX 0.10.2: the
kernel's Mosaic is JAX's (scalars: `tpu.log`, `formatted` with `{}` placeholders turned
into `$0`, `$1`, ...; one vector: `tpu.log_buffer` of a VMEM copy in a `tpu.region`),
the prints JAX's TPU lowering refuses raise JAX's exception and message at the print's
line, and interpreted kernels print what JAX's interpret mode prints. Outside kernels a
print is still a host callback.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import triton as jplt  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import triton as plt  # noqa: E402

from jaxlib.mlir import ir  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.passes import load_pass_plugin  # noqa: E402
from mjax.passes.ir_util import nested_ops  # noqa: E402
from test_mosaic_differential import (assert_same_mosaic, custom_calls, decode,  # noqa: E402
                                      tpu_mosaic)
from test_triton_lowering import _jax_triton_call, _ours_traced  # noqa: E402

SHAPE = (8, 128)
LIBS = {"jax": (jax, jpl), "mjax": (mjax, pl)}


def kernels(J, P) -> dict:
    """name -> kernel (x_ref, o_ref), each printing, then copying x."""
    def copy(print_):
        def kernel(x, o):
            print_(x)
            o[...] = x[...]
        return kernel
    def in_bodies(x):                    # (prints in a loop body and a pl.when branch)
        J.lax.fori_loop(0, 2, lambda i, c: (P.debug_print("step {}", i), c)[1], 0)

        @P.when(P.program_id(0) == 1)
        def _():
            P.debug_print("last block:", x[0, 0])
    return {
        "in_bodies": copy(in_bodies),
        "scalars_placeholders": copy(lambda x: P.debug_print(
            "program {} of {}", P.program_id(0), P.num_programs(0))),
        "literal_placeholder": copy(lambda x: P.debug_print("seven {}", 7)),
        "no_placeholders": copy(lambda x: P.debug_print("x[0, 0], program:", x[0, 0],
                                                         P.program_id(0))),
        "f32_scalar": copy(lambda x: P.debug_print("sum", x[...].sum())),
        "text_only": copy(lambda x: P.debug_print("hello from the kernel")),
        "vector": copy(lambda x: P.debug_print("x = {}", x[...])),
        "vector_row": copy(lambda x: P.debug_print("row: {}", x[0, :] * 2)),
        "jax_debug_print": copy(lambda x: J.debug.print("block {}", x[...])),
        "jax_debug_print_scalars": copy(lambda x: J.debug.print(
            "program {}", P.program_id(0))),
    }


# name -> kernel JAX's TPU lowering refuses
def bad_kernels(J, P) -> dict:
    def copy(print_):
        def kernel(x, o):
            print_(x)
            o[...] = x[...]
        return kernel
    return {
        "ordered": copy(lambda x: J.debug.print("p {}", P.program_id(0), ordered=True)),
        "keywords": copy(lambda x: J.debug.print("p {p}", p=P.program_id(0))),
        "mixed": copy(lambda x: P.debug_print("{}", x[...], x[0, 0])),
        "two_vectors": copy(lambda x: P.debug_print("{} {}", x[...], x[...])),
        "vector_not_last": copy(lambda x: P.debug_print("x = {} !", x[...])),
        "vector_no_placeholder": copy(lambda x: P.debug_print("x =", x[...])),
        "float_placeholder": copy(lambda x: P.debug_print("x0 = {}", x[0, 0])),
        "format_spec": copy(lambda x: P.debug_print("p {:d}", P.program_id(0))),
        "conversion": copy(lambda x: P.debug_print("p {!r}", P.program_id(0))),
        "positional_field": copy(lambda x: P.debug_print("p {0}", P.program_id(0))),
        "too_few": copy(lambda x: P.debug_print("p {} {}", P.program_id(0))),
    }


def call(J, P, kernel, interpret=False):
    spec = P.BlockSpec(SHAPE, lambda i: (0, 0))
    return lambda x: P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(SHAPE, np.float32),
                                   grid=(2,), in_specs=[spec], out_specs=spec,
                                   interpret=interpret)(x)


def mosaic(lib, name, table=kernels):
    J, P = LIBS[lib]
    return tpu_mosaic(J, call(J, P, table(J, P)[name]), [(SHAPE, np.float32)])


@pytest.mark.parametrize("name", list(kernels(jax, jpl)))
def test_mosaic_as_jax(name):
    want, got = mosaic("jax", name), mosaic("mjax", name)
    assert got[0] == want[0]
    assert_same_mosaic(want[1], got[1])


def test_prints_are_logs():
    """(the comparison above is not vacuous: the logs are there)"""
    assert 'tpu.log "program $0 of $1" {formatted = true}' in mosaic("mjax",
                                                                    "scalars_placeholders")[1]
    assert 'tpu.log_buffer "x = " {shape = array<i64: 8, 128>}' in mosaic("mjax", "vector")[1]


@pytest.mark.parametrize("name", list(bad_kernels(jax, jpl)))
def test_refused_as_jax(name):
    with pytest.raises(Exception) as jerr:
        mosaic("jax", name, bad_kernels)
    with pytest.raises(type(jerr.value)) as merr:
        mosaic("mjax", name, bad_kernels)
    message = str(merr.value)
    assert message.endswith(": " + str(jerr.value).splitlines()[-1]), message
    assert message.startswith(__file__ + ":"), message      # (the print's line)


def run_printing(lib, name, capfd) -> str:
    J, P = LIBS[lib]
    x = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    y = J.jit(call(J, P, kernels(J, P)[name], interpret=True))(x)
    J.effects_barrier()
    np.testing.assert_array_equal(np.asarray(y), x)
    return capfd.readouterr().out


@pytest.mark.parametrize("name", list(kernels(jax, jpl)))
def test_interpret_prints_as_jax(name, capfd):
    capfd.readouterr()
    want = run_printing("jax", name, capfd)
    got = run_printing("mjax", name, capfd)
    assert want
    if jax.default_backend() == "cpu":
        assert got == want
    else:   # (unordered callbacks: on the chip JAX's reach the host out of program order)
        assert sorted(got.splitlines()) == sorted(want.splitlines())


def test_vmap_of_a_printing_kernel_interprets(capfd):
    """vmap of the pallas_call transforms the discharged kernel: the print is a host
    callback there, run at each grid step of each batch element."""
    f = call(mjax, pl, kernels(mjax, pl)["scalars_placeholders"], interpret=True)
    x = np.arange(3 * np.prod(SHAPE), dtype=np.float32).reshape(3, *SHAPE)
    capfd.readouterr()
    y = mjax.jit(mjax.vmap(f))(x)
    mjax.effects_barrier()
    np.testing.assert_array_equal(np.asarray(y), x)
    lines = capfd.readouterr().out.splitlines()
    assert sorted(lines) == sorted(["program 0 of 2", "program 1 of 2"] * 3), lines


def test_outside_kernels_a_print_is_a_host_callback():
    def f(x):
        pl.debug_print("x = {}", x)
        return x
    text = str(mjax.jit(f).trace(mjax.ShapeDtypeStruct((4,), np.float32)).jaxpr)
    assert "debug_print" not in text and "callback" in text, text


# ---- Triton: tt.print, as JAX's Triton lowering ---------------------------------------------
def triton_kernels(J, P) -> dict:
    def kernel(print_):
        def k(x, o):
            print_(x)
            o[...] = x[...]
        return k
    return {
        "scalars": kernel(lambda x: P.debug_print("x0, program:", x[0], P.program_id(0))),
        "vector": kernel(lambda x: P.debug_print("x", x[...])),
        "text_only": kernel(lambda x: P.debug_print("hello")),
        "placeholder": kernel(lambda x: P.debug_print("p {}", P.program_id(0))),
        "ordered": kernel(lambda x: J.debug.print("p {}", P.program_id(0), ordered=True)),
    }


TRITON_PARAMS = {"jax": jplt.CompilerParams, "mjax": plt.CompilerParams}


def triton_prints(lib, name) -> list[str]:
    J, P = LIBS[lib]
    spec = P.BlockSpec((64,), lambda i: (i,))
    params = TRITON_PARAMS[lib]()           # (Triton, not Mosaic GPU)
    f = lambda x: P.pallas_call(triton_kernels(J, P)[name],  # noqa: E731
                                out_shape=J.ShapeDtypeStruct((128,), np.float32), grid=(2,),
                                in_specs=[spec], out_specs=spec, compiler_params=params)(x)
    _, tmod = (_jax_triton_call if lib == "jax" else _ours_traced)(
        f, J.numpy.zeros((128,), np.float32))
    return [re.sub(r"%[\w#]+", "%v", str(op)) for op in nested_ops(tmod)
            if op.name == "tt.print"]


@pytest.mark.parametrize("name", ["scalars", "vector", "text_only"])
def test_triton_print_as_jax(name):
    want = triton_prints("jax", name)
    assert len(want) == 1 and triton_prints("mjax", name) == want


@pytest.mark.parametrize("name", ["placeholder", "ordered"])
def test_triton_refused_as_jax(name):
    with pytest.raises(Exception) as jerr:
        triton_prints("jax", name)
    with pytest.raises(type(jerr.value)) as merr:
        triton_prints("mjax", name)
    assert str(merr.value).endswith(": " + str(jerr.value).splitlines()[-1]), merr.value


def test_strip_debug_prints_removes_kernel_prints(capfd):
    """examples/passes/strip_debug_prints.py strips a kernel's prints too (interpreted,
    they printed as host callbacks before kernels had their own print op)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    [strip] = load_pass_plugin(str(root / "examples/passes/strip_debug_prints.py"))
    f = call(mjax, pl, kernels(mjax, pl)["in_bodies"], interpret=True)
    x = np.ones(SHAPE, np.float32)
    capfd.readouterr()
    np.testing.assert_array_equal(np.asarray(mjax.jit(f)(x)), x)
    mjax.effects_barrier()
    assert "last block:" in capfd.readouterr().out
    np.testing.assert_array_equal(np.asarray(mjax.jit(f, passes=[strip()])(x)), x)
    mjax.effects_barrier()
    assert capfd.readouterr().out == ""
    text = mosaic_of(mjax.jit(call(mjax, pl, kernels(mjax, pl)["vector"]), passes=[strip()]))
    assert "tpu.log" not in text and "tpu.vector_store" in text


def mosaic_of(jitted) -> str:
    """The Mosaic text of a jitted function's one kernel, lowered for the TPU."""
    text = jitted.trace(mjax.ShapeDtypeStruct(SHAPE, np.float32)).lower(
        lowering_platforms=("tpu",)).as_text()
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)      # (held: its ops die with it)
        (cc,) = custom_calls(module)
        return decode(cc)[1]
