"""A flax.nnx + optax LM training step (flax_like_step.py: flax's LayerNorm, multi-head
attention with a causal mask, Linear, Embed and attend, gelu, optax's integer-label
softmax cross-entropy and adamw, written with jax alone) is JAX's program and gives JAX's
bits (issue 54.6, issue 57.3). The script runs twice in child processes, under real jax
and under `python -m mjax`:

- the step lowered for a TPU: the multisets of StableHLO operations agree, after both
  modules get JAX's private functions inlined and canonicalize + cse (XLA does the same
  for JAX's); constants, broadcasts of constants and converts of a value to its own type
  are left out (JAX broadcasts scalar literals where mjax makes splat constants, and
  converts weak-typed scalars to strong ones; XLA treats them alike);
- three adamw steps on the CPU: the same losses, parameters and optimizer state, bit
  for bit.
"""
import collections
import os
import subprocess
import sys

import numpy as np
import pytest

import jax  # noqa: E402,F401  (the oracle, from the test extra: missing, the file fails)

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "flax_like_step.py")


def _run(prefix, how, under_mjax):
    cmd = [sys.executable] + (["-m", "mjax"] if under_mjax else []) + [SCRIPT, prefix, how,
                                                                         "3"]
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with open(prefix + ".tpu.mlir") as f:
        text = f.read()
    return text, dict(np.load(prefix + ".npz"))


@pytest.fixture(scope="module", params=["nn", "einsum"])
def runs(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"flax_like_{request.param}")
    return (request.param, _run(str(d / "jax"), request.param, False),
            _run(str(d / "mjax"), request.param, True))


def op_multiset(text: str) -> collections.Counter:
    """The StableHLO/CHLO operations of @main (calls inlined), each keyed by its name,
    attributes, operand and result types and region body; constants and what is built
    from them only by broadcasts and converts, and same-type converts, left out."""
    from jaxlib.mlir import ir

    from stablehlo_normal_form import normalized_main

    ctx, _module, main = normalized_main(text)
    with ctx:
        ops, constant = collections.Counter(), set()

        def visit(op):
            if op.name in ("func.func", "func.return"):
                return ir.WalkResult.ADVANCE
            operand = op.operands[0] if len(op.operands) else None
            from_constant = (operand is not None and not isinstance(operand.owner, ir.Block)
                             and operand.owner in constant)
            if op.name == "stablehlo.constant" or (
                    op.name in ("stablehlo.broadcast_in_dim", "stablehlo.convert")
                    and from_constant):
                constant.add(op)
                return ir.WalkResult.ADVANCE
            if op.name == "stablehlo.convert" and operand.type == op.results[0].type:
                return ir.WalkResult.ADVANCE
            if op.parent != main:
                return ir.WalkResult.ADVANCE      # (reduce/scatter bodies: in the key)
            attrs = tuple(sorted((n, str(op.attributes[n])) for n in op.attributes
                                 if not n.startswith(("mhlo.", "jax.", "mjax.", "sdy."))))
            body = tuple(o.operation.name for r in op.regions for b in r.blocks
                         for o in b.operations)
            ops[(op.name, attrs, body, tuple(str(v.type) for v in op.operands),
                 tuple(str(r.type) for r in op.results))] += 1
            return ir.WalkResult.ADVANCE
        main.walk(visit)
    return ops


def _short(counter):
    return {f"{k[0]} {k[3]} -> {k[4]}": n for k, n in counter.items()}


def test_op_multiset_sees_a_difference():
    # (the comparison can fail: a multiply for a chlo.square is a different program)
    a = ("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %0 = chlo.square %x : tensor<4xf32> -> tensor<4xf32>\n"
         "  return %0 : tensor<4xf32>\n}")
    b = ("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %0 = stablehlo.multiply %x, %x : tensor<4xf32>\n"
         "  return %0 : tensor<4xf32>\n}")
    assert op_multiset(a) != op_multiset(b)
    assert op_multiset(a) == op_multiset(a.replace("%x", "%y"))


def test_step_for_tpu_is_jaxs_program(runs):
    how, (jax_text, _), (mjax_text, _) = runs
    theirs, mine = op_multiset(jax_text), op_multiset(mjax_text)
    # (x**2 and mean**2 in each of the 2 * LAYERS + 1 = 5 layer norms: lax.square)
    assert sum(n for k, n in theirs.items() if k[0] == "chlo.square") == 10
    only_mine, only_theirs = _short(mine - theirs), _short(theirs - mine)
    assert not only_mine and not only_theirs, (only_mine, only_theirs)


def test_steps_on_cpu_are_jaxs_to_the_bit(runs):
    how, (_, theirs), (_, mine) = runs
    assert sorted(theirs) == sorted(mine)
    differ = [k for k in theirs if not np.array_equal(theirs[k], mine[k])]
    assert not differ, (how, differ, theirs["losses"], mine["losses"])
