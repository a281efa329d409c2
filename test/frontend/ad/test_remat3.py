"""jax_remat3 (JAX 0.10.2's new remat) and the offloading policies: gradients and the
residuals reverse mode saves (print_saved_residuals) against jax's."""
import contextlib
import io
import re

import jax
import jax.ad_checkpoint
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.ad_checkpoint
import mjax.numpy as jnp

W = np.random.RandomState(0).randn(3, 3).astype(np.float32)
X = np.linspace(-1.0, 1.0, 3).astype(np.float32)


def _policy(J, kind):
    cp = J.checkpoint_policies
    return {
        "none": None, "nothing": cp.nothing_saveable, "everything": cp.everything_saveable,
        "dots": cp.dots_saveable, "dots_nb": cp.dots_with_no_batch_dims_saveable,
        "only_a": cp.save_only_these_names("a"), "but_a": cp.save_any_names_but_these("a"),
        "except_a": cp.save_anything_except_these_names("a"),
        "both": cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("b")),
        "callable": lambda prim, *_, **__: str(prim) != "sin",
        "offload_dot": cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
        "offload_names": cp.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
            offload_src="device", offload_dst="pinned_host"),
    }[kind]


def _residuals(J, np_, kind, remat3):
    name = J.ad_checkpoint.checkpoint_name
    J.config.update("jax_remat3", remat3)
    try:
        def body(w, x):
            a = name(np_.sin(np_.dot(w, x)), "a")
            b = name(np_.cos(np_.dot(w, a)), "b")
            return np_.sum(np_.sin(b) * a)
        f = J.checkpoint(body, policy=_policy(J, kind))
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            J.ad_checkpoint.print_saved_residuals(f, W, X)
        grads = J.grad(f, argnums=(0, 1))(W, X)
    finally:
        J.config.update("jax_remat3", False)
    # (the file of each line differs: this module vs the same lines run under mjax)
    lines = [re.sub(r" from \S+:(\d+):(\d+)", r" at \1:\2", ln)
             for ln in buf.getvalue().splitlines()]
    return lines, grads


REMAT3_KINDS = ["none", "nothing", "everything", "dots", "dots_nb", "only_a", "but_a",
                "except_a", "both", "callable", "offload_dot", "offload_names"]


@pytest.mark.parametrize("kind", REMAT3_KINDS)
def test_remat3_saves_what_jax_saves(kind):
    mine, g1 = _residuals(mjax, jnp, kind, True)
    theirs, g2 = _residuals(jax, jjnp, kind, True)
    assert mine == theirs
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_offload_policies_without_remat3():
    # Offloaded values are saved on the device (JAX moves them to pinned host memory:
    # f32<host>[..] output of device_put); everything else is as JAX saves.
    for kind in ("offload_dot", "offload_names"):
        mine, g1 = _residuals(mjax, jnp, kind, False)
        theirs, g2 = _residuals(jax, jjnp, kind, False)
        assert len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            if "<host>" in t:   # (the same value, kept on the device)
                assert m.split()[0] == t.split()[0].replace("<host>", "")
            else:
                assert m == t
        for a, b in zip(g1, g2):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_remat3_checkpoint_names_arguments_by_position():
    for J in (mjax, jax):
        J.config.update("jax_remat3", True)
        try:
            f = J.checkpoint(lambda w, x: (w @ x).sum())
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                J.ad_checkpoint.print_saved_residuals(f, W, X)
        finally:
            J.config.update("jax_remat3", False)
        assert "from the argument args[0]" in buf.getvalue()


def test_offload_names_must_be_disjoint():
    for J in (mjax, jax):
        with pytest.raises(ValueError, match="exclusive"):
            J.checkpoint_policies.save_and_offload_only_these_names(
                names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
                offload_src="device", offload_dst="pinned_host")
