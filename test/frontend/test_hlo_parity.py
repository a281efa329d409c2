"""The programs mjax hands XLA are as good as JAX's for a transformer LM step, a CNN step
and an RNN step (issue 25.4), so a lowering that makes XLA's job harder is caught even
when the numbers agree: the same dot_generals and loops in the StableHLO, the same heavy
ops (dots, convolutions, loops, windows, gathers, scatters, pads, concatenates) in XLA's
optimized HLO, and fusion and instruction counts within 10% of JAX's. The models are the
benchmarks' own (benchmarks/transformer.py, benchmarks/cnn.py), at small sizes; the
values agree too."""
from __future__ import annotations

import collections
import pathlib
import re
import sys

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cnn  # noqa: E402
import transformer  # noqa: E402
from stablehlo_normal_form import normalized_main as _normalized_main  # noqa: E402

# (and the ops that write a whole array to move data: a split's gradient as pads added
# up instead of one concatenate cost the LM step 5% while fusion counts stayed within 10%)
HEAVY = ("dot", "convolution", "while", "reduce-window", "select-and-scatter", "gather",
         "scatter", "sort", "pad", "concatenate")


def _rnn_step(lib, jnp):
    def loss(p, xs, t):
        def cell(h, x):
            return jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["b"]), None
        h, _ = lib.lax.scan(cell, jnp.zeros((xs.shape[1], p["wh"].shape[0])), xs)
        return jnp.mean((h @ p["wo"] - t) ** 2)

    def step(p, xs, t):
        value, g = lib.value_and_grad(loss)(p, xs, t)
        return value, lib.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)
    return step


def _model(name):
    rng = np.random.default_rng(0)
    if name == "transformer":
        params = transformer.lm_params(rng, 1)
        zeros = jax.tree_util.tree_map(np.zeros_like, params)
        tokens = rng.integers(0, transformer.VOCAB, (2, transformer.SEQ + 1)).astype(np.int32)
        return transformer.make_step, (params, (np.zeros((), np.float32), zeros, zeros),
                                       tokens)
    if name == "cnn":
        labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]
        return cnn.make_step, (cnn.cnn_params(rng),
                               rng.standard_normal((8, 1, 28, 28)).astype(np.float32), labels)
    params = {"wx": rng.standard_normal((16, 32)).astype(np.float32) * 0.3,
              "wh": rng.standard_normal((32, 32)).astype(np.float32) * 0.3,
              "b": np.zeros(32, np.float32),
              "wo": rng.standard_normal((32, 4)).astype(np.float32) * 0.3}
    return _rnn_step, (params, rng.standard_normal((10, 8, 16)).astype(np.float32),
                       rng.standard_normal((8, 4)).astype(np.float32))


def _shape_of_program(lib, jnp, make, args):
    lowered = lib.jit(make(lib, jnp)).lower(*args)
    stablehlo = lowered.as_text()
    dots = sorted(re.sub(r",\s*precision = \[[^\]]*\]", "", line.split("dot_general", 1)[1])
                  .split(",", 2)[2].strip()
                  for line in stablehlo.splitlines() if "stablehlo.dot_general" in line)
    compiled = lowered.compile()
    hlo = compiled.as_text()
    entry = hlo[hlo.index("\nENTRY"):]
    kinds = collections.Counter(re.findall(r"= \S+ ([\w-]+)\(", hlo))
    return {"dots": dots, "loops": stablehlo.count("stablehlo.while"),
            "heavy": {k: kinds[k] for k in HEAVY if kinds[k]},
            "fusions": len(re.findall(r"= \S+ fusion\(", entry)),
            "instructions": sum(kinds.values()),
            "values": lib.tree_util.tree_leaves(compiled(*args))}


def test_transformer_step_for_xla_matches_jax():
    _check("transformer")


def test_cnn_step_for_xla_matches_jax():
    _check("cnn")


def test_rnn_step_for_xla_matches_jax():
    # (value_and_grad through a scan: one forward loop and one backward loop, as JAX's;
    # the value is the forward part's, not a third loop's)
    _check("rnn")


def _check(name):
    make, args = _model(name)
    mine = _shape_of_program(mjax, mjnp, make, args)
    theirs = _shape_of_program(jax, jjnp, make, args)
    assert mine["dots"] == theirs["dots"]
    assert mine["loops"] == theirs["loops"]
    assert mine["heavy"] == theirs["heavy"]
    for key in ("fusions", "instructions"):
        assert abs(mine[key] - theirs[key]) <= 0.1 * theirs[key], (key, mine[key],
                                                                   theirs[key])
    for a, b in zip(mine["values"], theirs["values"]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=1e-5)


# ---- the same program as JAX's, for the TPU and on the CPU (issue 54.5, issue 57.3) ------
# The modules both libraries lower for a TPU (which needs no chip), compared op for op:
# after inlining JAX's private functions (jit-wrapped jnp functions such as take_along_axis
# and log_softmax; mjax inlines its own) and running canonicalize + cse on both (mjax's
# pipeline runs them, JAX's does not: XLA does), the multisets of operations agree,
# each keyed by its name, attributes, and operand and result types. Left out: constants and
# broadcasts of constants (JAX broadcasts scalar literals where mjax makes splat
# constants; XLA treats them alike) and converts of a value to its own type (JAX's of
# a weak-typed scalar). Reduces, gathers, scatters, dots with their precision configs and
# reshapes all count.
def _ops_of_module(text: str) -> collections.Counter:
    from jaxlib.mlir import ir

    ctx, _module, main = _normalized_main(text)
    with ctx:
        ops: collections.Counter = collections.Counter()
        loop_ops: collections.Counter = collections.Counter()
        constant = set()

        def key(op):
            attrs = sorted((n, str(op.attributes[n])) for n in op.attributes
                           if not n.startswith(("mhlo.", "jax.", "sdy.", "mjax.")))
            body = [o.operation.name for r in op.regions for b in r.blocks
                    for o in b.operations]
            return (op.name, tuple(attrs), tuple(body),
                    tuple(str(v.type) for v in op.operands),
                    tuple(str(r.type) for r in op.results))

        def visit_op(op):
            if op.name in ("func.func", "func.return", "builtin.module"):
                return ir.WalkResult.ADVANCE
            same_type_convert = (op.name == "stablehlo.convert" and
                                 op.operands[0].type == op.results[0].type)
            if op.name == "stablehlo.constant" or (
                    op.name in ("stablehlo.broadcast_in_dim", "stablehlo.convert") and
                    not isinstance(op.operands[0].owner, ir.Block) and
                    op.operands[0].owner in constant):
                constant.add(op)
                return ir.WalkResult.ADVANCE
            if same_type_convert:
                return ir.WalkResult.ADVANCE
            parent = op.parent
            while parent.name not in ("func.func", "stablehlo.while"):
                parent = parent.parent          # (reduce/scatter bodies: in their op's key)
            if parent.name == "stablehlo.while":
                loop_ops[key(op)] += 1          # (loop bodies: compared apart)
            elif op.name == "stablehlo.while":
                ops[("stablehlo.while",)] += 1
            elif op.parent == main:
                ops[key(op)] += 1
            return ir.WalkResult.ADVANCE
        main.walk(visit_op)
    return ops, loop_ops


def _dataflow_of_module(text: str):
    """@main's normalized body (as _ops_of_module's) as a dataflow graph: each value named
    by a hash of its op (name, attributes, region ops, result types) and its operands'
    names in order, constants by their values (a broadcast scalar constant is the splat
    constant of its value). Returns (the names of the results, the multiset of op
    names): equal for two modules that compute the same values the same way."""
    import hashlib

    ctx, _module, main = _normalized_main(text)
    with ctx:
        block = main.regions[0].blocks[0]
        names = {a: f"arg{i}" for i, a in enumerate(block.arguments)}
        ops: collections.Counter = collections.Counter()
        for op in block.operations:
            op = op.operation
            ins = [names[v] for v in op.operands]
            if op.name == "func.return":
                return ins, ops
            if op.name == "stablehlo.constant":
                key = "const " + str(op.attributes["value"]).split(" : ")[0]
            elif op.name in ("stablehlo.broadcast_in_dim", "stablehlo.convert") and \
                    ins[0].startswith("const ") and (op.name != "stablehlo.convert" or
                                                     op.operands[0].type == op.results[0].type):
                key = ins[0].rsplit(" : ", 1)[0]
            elif op.name == "stablehlo.convert" and op.operands[0].type == op.results[0].type:
                names[op.results[0]] = ins[0]
                continue
            else:
                attrs = sorted((n, str(op.attributes[n])) for n in op.attributes
                               if not n.startswith(("mhlo.", "jax.", "sdy.", "mjax.")))
                body = [o.operation.name for r in op.regions for b in r.blocks
                        for o in b.operations]
                key = hashlib.sha1(repr((op.name, attrs, body, ins, [
                    str(r.type) for r in op.results])).encode()).hexdigest()[:16]
                ops[op.name] += 1
            for j, r in enumerate(op.results):
                names[r] = f"{key}{'' if key.startswith('const ') else f'#{j}'} : {r.type}"
    raise AssertionError("@main has no return")


def _lowered_text(lib, jnp, make, args, platform):
    return lib.jit(make(lib, jnp)).trace(*args).lower(
        lowering_platforms=(platform,)).as_text()


def _lm(layers=2):
    saved = transformer.D, transformer.HEADS, transformer.SEQ, transformer.VOCAB
    transformer.D, transformer.HEADS, transformer.SEQ, transformer.VOCAB = 256, 4, 64, 512
    try:
        rng = np.random.default_rng(0)
        params = transformer.lm_params(rng, layers)
        zeros = jax.tree_util.tree_map(np.zeros_like, params)
        tokens = rng.integers(0, transformer.VOCAB,
                              (2, transformer.SEQ + 1)).astype(np.int32)
        return transformer.make_step, (params, (np.zeros((), np.float32), zeros, zeros),
                                       tokens), saved
    except BaseException:
        transformer.D, transformer.HEADS, transformer.SEQ, transformer.VOCAB = saved
        raise


def _same_ops(make, args, platform, loops=True):
    """The op multisets of the step lowered by both libraries for `platform`, asserted
    equal; `loops=False` leaves out what loop bodies carry (see the RNN's test)."""
    (mine, mine_loops), (theirs, their_loops) = (
        _ops_of_module(_lowered_text(lib, jnp, make, args, platform))
        for lib, jnp in ((mjax, mjnp), (jax, jjnp)))
    if not loops:
        def work(c):    # (a loop body's ops but what it carries)
            return collections.Counter({k: n for k, n in c.items()
                                        if k[0] != "stablehlo.return"})
        mine, theirs = mine + work(mine_loops), theirs + work(their_loops)
    else:
        mine, theirs = mine + mine_loops, theirs + their_loops
    only_mine = {k[0] + str(k[3:]): n for k, n in (mine - theirs).items()}
    only_theirs = {k[0] + str(k[3:]): n for k, n in (theirs - mine).items()}
    assert not only_mine and not only_theirs, (only_mine, only_theirs)
    return mine


def test_lm_step_for_tpu_is_jaxs_program():
    # The LM step of benchmarks/transformer.py (2 layers, d 256, seq 64, vocab 512) lowered
    # for a TPU: the same reduces (the keepdims means' transposes reduce over the kept
    # dim, as JAX's broadcast_in_dim transpose), take_along_axis's one batched gather and
    # scatter-add, each dot with precision [DEFAULT, DEFAULT], softmax's y ** -2 on the
    # (b, h, q, 1) sums, and no reshape JAX does not have. (The default matmul precision
    # is set here: on the chip the suite runs with JAX_DEFAULT_MATMUL_PRECISION=highest,
    # test/conftest.py, which makes every dot HIGHEST in both libraries.)
    with mjax.default_matmul_precision("default"), jax.default_matmul_precision("default"):
        _lm_step_for_tpu_is_jaxs_program()


def _lm_step_for_tpu_is_jaxs_program():
    make, args, saved = _lm()
    try:
        ops = _same_ops(make, args, "tpu")
    finally:
        transformer.D, transformer.HEADS, transformer.SEQ, transformer.VOCAB = saved
    names = collections.Counter()
    for k, n in ops.items():
        names[k[0]] += n
    assert names["stablehlo.gather"] == 2 and names["stablehlo.scatter"] == 2
    assert any("operand_batching_dims = [0, 1]" in dict(k[1])["dimension_numbers"]
               for k in ops if k[0] == "stablehlo.gather")
    dots = [k for k in ops if k[0] == "stablehlo.dot_general"]
    assert dots and all(
        "[#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]" in dict(k[1])[
            "precision_config"] for k in dots)
    # and more than the same ops: the same dataflow, operand order included
    make, args, saved = _lm()
    try:
        mine, theirs = (_dataflow_of_module(_lowered_text(lib, jnp, make, args, "tpu"))
                        for lib, jnp in ((mjax, mjnp), (jax, jjnp)))
    finally:
        transformer.D, transformer.HEADS, transformer.SEQ, transformer.VOCAB = saved
    assert mine[1] == theirs[1]
    differing = [i for i, (a, b) in enumerate(zip(mine[0], theirs[0])) if a != b]
    assert len(mine[0]) == len(theirs[0]) and not differing, differing


def test_cnn_step_for_tpu_is_jaxs_program():
    # (convolutions with precision [DEFAULT, DEFAULT]; the max's JVP as JAX's
    # _reduce_chooser_jvp_rule: the answer reshaped, compared, converted)
    make, args = _model("cnn")
    ops = _same_ops(make, args, "tpu")
    convs = {k: n for k, n in ops.items() if k[0] == "stablehlo.convolution"}
    assert sum(convs.values()) == 5     # (2 forward, 2 for the kernels, 1 for h)
    assert all("precision_config" in dict(k[1]) for k in convs)


def test_rnn_step_for_tpu_has_jaxs_ops_and_loops():
    # The scan's loops differ from JAX's in what they carry: JAX carries the
    # loop-invariant operands through its while loops (mjax's bodies read them from
    # outside). Compared: every op outside the loops, and every op inside them but their
    # returns (each step's row is written through a broadcast_in_dim, as JAX's
    # expand_dims; the reverse loop's index is JAX's n - i - 1).
    make, args = _model("rnn")
    _same_ops(make, args, "tpu", loops=False)


def test_lm_steps_on_cpu_are_jaxs_to_the_bit():
    # Three Adam steps of the small LM on the CPU: the same losses and the same parameters
    # and optimizer state, bit for bit (the programs XLA gets are the same, down to
    # which broadcasts are shared: passes/broadcast_per_use.py).
    make, args, saved = _lm()
    try:
        results = []
        for lib, jnp in ((mjax, mjnp), (jax, jjnp)):
            step = lib.jit(make(lib, jnp))
            params, opt, tokens = args
            losses = []
            for _ in range(3):
                loss, params, opt = step(params, opt, tokens)
                losses.append(np.asarray(loss))
            results.append((losses, [np.asarray(x) for x in
                                     lib.tree_util.tree_leaves((params, opt))]))
    finally:
        transformer.D, transformer.HEADS, transformer.SEQ, transformer.VOCAB = saved
    (mine, mine_state), (theirs, their_state) = results
    assert [m.tobytes() for m in mine] == [t.tobytes() for t in theirs], (mine, theirs)
    assert len(mine_state) == len(their_state)
    differing = [i for i, (a, b) in enumerate(zip(mine_state, their_state))
                 if not np.array_equal(a, b)]
    assert not differing, differing


@pytest.mark.parametrize("name", ["broadcast_to adds a dim", "broadcast_in_dim", "new axis",
                                  "keepdims mean"])
def test_broadcast_gradients_are_jaxs_programs(name):
    # The transposes of broadcast_in_dim and expand_dims are JAX's: a reduce over every
    # dim but the operand's kept non-unit ones, then its size-1 dims put back by a
    # broadcast_in_dim (not a reshape); the same bits.
    def make(lib, jnp):
        f = {"broadcast_to adds a dim": lambda x, w: jnp.broadcast_to(x, (2, 3, 4)) * w,
             "broadcast_in_dim": lambda x, w: lib.lax.broadcast_in_dim(
                 x, (3, 2, 4), (0, 2)) * w.transpose(1, 0, 2),
             "new axis": lambda x, w: x[:, None] * w[:, :, :1],
             "keepdims mean": lambda x, w: jnp.mean(x * w[0, :, :1], axis=0,
                                                    keepdims=True)}[name]
        return lib.grad(lambda x, w: f(x, w).sum())
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((3, 1)).astype(np.float32),
            rng.standard_normal((2, 3, 4)).astype(np.float32))
    if name == "new axis":
        args = (args[0], rng.standard_normal((3, 5, 4)).astype(np.float32))
    _same_ops(make, args, "cpu")
    mine, theirs = (np.asarray(lib.jit(make(lib, jnp))(*args))
                    for lib, jnp in ((mjax, mjnp), (jax, jjnp)))
    assert mine.tobytes() == theirs.tobytes()
