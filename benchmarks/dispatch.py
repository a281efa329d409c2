"""The Python-side costs of issue #13, mjax vs JAX in one process (interleaved rounds).

    python benchmarks/dispatch.py                 # ratios (median of rounds)
    python benchmarks/dispatch.py --profile jit   # cProfile of one target (mjax only)
    python benchmarks/dispatch.py --timer cpu     # process CPU time instead of wall time

Targets: cached jit call of a tiny function, of a 10-array-arg/10-output pytree function,
with a keyword argument (`f(x, y=y)`), with a static argument (`f(x, 3)`), with a Python
scalar (`f(x, 3.0)`, traced) or a NumPy array as an argument, a registered dataclass,
a donated argument, a committed array, under a config context manager, under set_mesh,
with arrays sharded over two devices or committed to the second
(XLA_FLAGS=--xla_force_host_platform_device_count=2 or more; those rows are left out with
one device), an eager op on
cached shapes (`x * y`, `jnp.sin(x)`, `x + 1.0`, `jnp.sum(x)`, `x[1]`; `x / y`, `x // y`,
`x % y`, `x ** y`, `jnp.maximum`, `np.float32(2) * x`, int32 + float32, an int array
times 2, `x.sum(axis=0)`, `jnp.max(x, axis=1)`, `x[:, 1]`, `x.at[1].set(2.0)`), an eager op
on a new shape (compiles), trace+lower of a 1,000-op chain and of random.normal of a
4096x4096 shape, trace+transform+lower of an MLP
train step, of per-example gradients (vmap of grad), of the scan RNN step (run.py) and of
the transformer LM step (transformer.py).
"""
from __future__ import annotations

import argparse
import cProfile
import dataclasses
import functools
import pstats
import statistics
import time

import numpy as np

from run import mlp_model, rnn_params
from transformer import lm_params, make_step


def cases(lib, jnp):
    """{name: (fn, calls per round)} for one library."""
    out = {}
    f = lib.jit(lambda x: x + 1.0)
    x = jnp.ones((4,), jnp.float32)
    f(x).block_until_ready()
    out["jit tiny fn"] = (lambda: f(x), 2000)

    g = lib.jit(lambda d: {k: v * 2.0 for k, v in d.items()})
    tree = {f"a{i}": jnp.ones((4,), jnp.float32) for i in range(10)}
    g(tree)
    out["jit 10 args/10 outs"] = (lambda: g(tree), 1000)

    fk = lib.jit(lambda x, y: x * y)
    fk(x, y=x)
    out["jit kwarg call"] = (lambda: fk(x, y=x), 2000)
    fs = lib.jit(lambda x, n: x * n, static_argnums=1)
    fs(x, 3)
    out["jit static arg"] = (lambda: fs(x, 3), 2000)
    fp = lib.jit(lambda x, n: x * n)       # (a Python scalar as a traced argument)
    fp(x, 3.0)
    out["jit Python scalar arg"] = (lambda: fp(x, 3.0), 2000)
    host = np.ones((4,), np.float32)       # (a NumPy array argument: put on the device)
    f(host)
    out["jit NumPy array arg"] = (lambda: f(host), 2000)
    # Issue 25's other calling conventions: a registered dataclass, a donated argument
    # (each call donates the last call's result), a committed array, and a call under a
    # config context manager.
    pair = _pair_class(lib)(jnp.ones((4,), jnp.float32), jnp.ones((4,), jnp.float32))
    fd = lib.jit(lambda p: p.a * p.b)
    fd(pair)
    out["jit dataclass arg"] = (lambda: fd(pair), 2000)
    fdon = lib.jit(lambda x: x + 1.0, donate_argnums=0)
    held = [fdon(jnp.ones((4,), jnp.float32))]

    def donating():
        held[0] = fdon(held[0])
    donating()
    out["jit donated arg"] = (donating, 2000)
    xc = lib.device_put(jnp.ones((4,), jnp.float32), lib.devices()[0])
    f(xc)
    out["jit committed arg"] = (lambda: f(xc), 2000)

    def in_context():
        with lib.default_matmul_precision("highest"):
            return f(x)
    in_context()
    out["jit under config context"] = (in_context, 2000)
    # Under a mesh context (a one-device mesh: the arguments need no laying out), and
    # with arguments sharded over two devices (with XLA_FLAGS giving two or more).
    one = lib.make_mesh((1,), ("x",), devices=lib.devices()[:1])

    def in_mesh():
        with lib.set_mesh(one):
            return f(x)
    in_mesh()
    out["jit under set_mesh"] = (in_mesh, 2000)
    if len(lib.devices()) >= 2:
        two = lib.make_mesh((2,), ("x",), devices=lib.devices()[:2])
        xs = lib.device_put(jnp.ones((8,), jnp.float32),
                            lib.sharding.NamedSharding(two, lib.sharding.PartitionSpec("x")))
        f(xs)
        out["jit sharded arg (2 devices)"] = (lambda: f(xs), 500)
        x1 = lib.device_put(jnp.ones((4,), jnp.float32), lib.devices()[1])
        f(x1)
        out["jit committed to device 1"] = (lambda: f(x1), 2000)

    y = jnp.ones((4,), jnp.float32)
    x * y
    out["eager op"] = (lambda: x * y, 2000)
    out["eager sin"] = (lambda: jnp.sin(x), 2000)
    out["eager x + 1.0"] = (lambda: x + 1.0, 2000)
    out["eager sum"] = (lambda: jnp.sum(x), 2000)
    x[1]
    out["eager x[i]"] = (lambda: x[1], 2000)
    # Fused functions and mixed operands, which the C eager path takes too.
    out["eager x / y"] = (lambda: x / y, 2000)
    out["eager x // y"] = (lambda: x // y, 2000)
    out["eager x % y"] = (lambda: x % y, 2000)
    out["eager x ** y"] = (lambda: x ** y, 2000)
    out["eager maximum(x, y)"] = (lambda: jnp.maximum(x, y), 2000)
    s32 = np.float32(2)
    out["eager np.float32(2) * x"] = (lambda: s32 * x, 2000)
    xi = jnp.ones((4,), jnp.int32)
    out["eager int32 + float32"] = (lambda: xi + x, 2000)
    out["eager int x * 2"] = (lambda: xi * 2, 2000)
    m = jnp.ones((3, 4), jnp.float32)
    out["eager x.sum(axis=0)"] = (lambda: m.sum(axis=0), 2000)
    out["eager max(x, axis=1)"] = (lambda: jnp.max(m, axis=1), 2000)
    out["eager x[:, 1]"] = (lambda: m[:, 1], 2000)
    out["eager x.at[i].set(v)"] = (lambda: x.at[1].set(2.0), 1000)

    # Eager transformations: JAX runs the function op by op each call; mjax traces it
    # each call too (its Python runs, as in JAX) and reuses the executable of the same
    # program (docs/performance.md, "Eager transformations").
    def small(v):
        return jnp.sum(jnp.sin(v) ** 2 + v * 3.0)
    xg = jnp.ones((10,), jnp.float32)
    gsmall = lib.grad(small)
    gsmall(xg)
    out["eager grad(f)(x)"] = (lambda: gsmall(xg), 100)
    out["eager vmap(f)(x)"] = (lambda: lib.vmap(jnp.sin)(xg), 100)
    # (a Python function new each call: traced at each call in both libraries, where
    # the row above's jnp.sin is a function of its avals alone, kept per avals in both)
    out["eager vmap(lambda)(x)"] = (lambda: lib.vmap(lambda v: jnp.sin(v) * 2.0 + v)(xg),
                                    100)
    out["eager vjp + pullback"] = (lambda: lib.vjp(small, xg)[1](1.0), 100)
    relu_params = [jnp.ones((64, 128), jnp.float32) * 0.01, jnp.ones((128, 10)) * 0.01]
    relu_x = jnp.ones((32, 64), jnp.float32)

    def relu_loss(p, v):
        return lib.nn.logsumexp(lib.nn.relu(v @ p[0]) @ p[1])
    grelu = lib.grad(relu_loss)
    grelu(relu_params, relu_x)
    out["eager grad, relu MLP"] = (lambda: grelu(relu_params, relu_x), 20)

    shapes = iter(range(1, 10**6))

    def new_shape():
        n = next(shapes)
        a = jnp.ones((n, 3), jnp.float32)   # ones itself may compile: do it apart
        return a, a
    out["eager new shape"] = ("new", new_shape, 3)

    def chain(v):
        for _ in range(250):
            v = jnp.sin(v) * 1.01 + 0.5 - v
        return v
    xs = jnp.ones((8,), jnp.float32)
    out["trace+lower 1000 ops"] = (lambda: lib.jit(lambda v: chain(v)).lower(xs), 1)
    # (a program of large shapes: constants of those shapes must stay splats, not arrays)
    key = lib.random.key(0)
    out["trace+lower normal 4096x4096"] = (
        lambda: lib.jit(lambda k: lib.random.normal(k, (4096, 4096))).lower(key), 1)

    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((m, n)).astype(np.float32), np.zeros(n, np.float32))
              for m, n in ((784, 512), (512, 512), (512, 10))]
    batch = rng.standard_normal((128, 784)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def loss(p, x, t):
        for w, b in p[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = p[-1]
        return jnp.mean((x @ w + b - t) ** 2)

    def step(p, x, t):
        gr = lib.grad(loss)(p, x, t)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, gr)]
    out["MLP step trace+transform+lower"] = (
        lambda: lib.jit(lambda p, x, t: step(p, x, t)).lower(params, batch, labels), 1)

    # The trace+transform+lower rows of run.py and transformer.py (no compile, no run).
    _, mlp_loss, _ = mlp_model(lib, jnp)
    per_example = lib.vmap(lib.grad(lambda p, x, t: mlp_loss(p, x[None], t[None])),
                           in_axes=(None, 0, 0))
    out["per-example trace+transform+lower"] = (
        lambda: lib.jit(lambda p, x, t: per_example(p, x, t)).lower(params, batch, labels), 1)

    rnn = rnn_params(rng)
    seq = rng.standard_normal((100, 32, 64)).astype(np.float32)
    rnn_t = rng.standard_normal((32, 10)).astype(np.float32)

    def rnn_loss(p, xs, t):
        wh, wx, b, wo = p

        def cell(h, x):
            return jnp.tanh(h @ wh + x @ wx + b), None
        h, _ = lib.lax.scan(cell, jnp.zeros((xs.shape[1], wh.shape[0]), jnp.float32), xs)
        return jnp.mean((h @ wo - t) ** 2)

    def rnn_step(p, xs, t):
        g = lib.grad(rnn_loss)(p, xs, t)
        return [w - 0.01 * gw for w, gw in zip(p, g)]
    out["RNN scan step trace+transform+lower"] = (
        lambda: lib.jit(lambda p, x, t: rnn_step(p, x, t)).lower(rnn, seq, rnn_t), 1)

    lm = lm_params(np.random.default_rng(0), 4)
    lm_opt = (np.zeros((), np.float32),) + (jax_tree_zeros(lm),) * 2
    tokens = np.random.default_rng(1).integers(0, 256, (16, 129)).astype(np.int32)
    lm_step = make_step(lib, jnp)
    out["LM step trace+transform+lower"] = (
        lambda: lib.jit(lambda p, o, t: lm_step(p, o, t)).lower(lm, lm_opt, tokens), 1)
    return out


def _pair_class(lib):
    """A dataclass of two arrays registered as a pytree with `lib`."""
    @functools.partial(lib.tree_util.register_dataclass, data_fields=["a", "b"],
                       meta_fields=[])
    @dataclasses.dataclass
    class Pair:
        a: object
        b: object
    return Pair


def jax_tree_zeros(params):
    """Zeros shaped like the LM's parameter dict (NumPy, so no library is involved)."""
    return {k: ([{n: np.zeros_like(a) for n, a in b.items()} for b in v]
                if k == "blocks" else np.zeros_like(v)) for k, v in params.items()}


_timer = time.perf_counter   # --timer cpu: time.process_time (all threads of the process;
                             # moves less than wall time on a loaded machine)


def run_round(case):
    if case[0] == "new":
        _, make, number = case
        total = 0.0
        for _ in range(number):
            a, b = make()
            t0 = _timer()
            a * b
            total += _timer() - t0
        return total / number
    fn, number = case
    t0 = _timer()
    for _ in range(number):
        fn()
    return (_timer() - t0) / number


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--profile", help="cProfile one case of mjax: jit, tree, kwarg, "
                                          "static, dataclass, donated, committed, context, "
                                          "mesh, sharded, device1, "
                                          "eager, eager-sin, eager-scalar, eager-sum, index, "
                                          "trace, mlp, per-example, rnn, lm")
    parser.add_argument("--only", help="substrings of the case names to run, comma-separated")
    parser.add_argument("--sort", default="tottime", help="--profile's sort key (cumtime, ...)")
    parser.add_argument("--lines", type=int, default=25, help="--profile's rows")
    parser.add_argument("--timer", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    global _timer
    if args.timer == "cpu":
        _timer = time.process_time
    import mjax
    import mjax.numpy as mnp
    libs = {"mjax": cases(mjax, mnp)}
    if args.profile:
        name = {"jit": "jit tiny fn", "tree": "jit 10 args/10 outs", "eager": "eager op",
                "eager-sin": "eager sin", "eager-scalar": "eager x + 1.0",
                "eager-sum": "eager sum", "kwarg": "jit kwarg call",
                "static": "jit static arg", "index": "eager x[i]",
                "dataclass": "jit dataclass arg", "donated": "jit donated arg",
                "committed": "jit committed arg", "context": "jit under config context",
                "mesh": "jit under set_mesh", "sharded": "jit sharded arg (2 devices)",
                "device1": "jit committed to device 1",
                "trace": "trace+lower 1000 ops",
                "mlp": "MLP step trace+transform+lower",
                "per-example": "per-example trace+transform+lower",
                "rnn": "RNN scan step trace+transform+lower",
                "lm": "LM step trace+transform+lower"}[args.profile]
        case = libs["mjax"][name]
        run_round(case)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(5 if case[1] == 1 else 1):
            run_round(case)
        prof.disable()
        pstats.Stats(prof).sort_stats(args.sort).print_stats(args.lines)
        return
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", mjax.default_backend())  # (the same platform)
    libs["jax"] = cases(jax, jnp)
    only = args.only.split(",") if args.only else [""]
    names = [n for n in libs["mjax"] if any(o in n for o in only)]
    times = {lib: {n: [] for n in names} for lib in libs}
    for n in names:
        for lib in libs:
            run_round(libs[lib][n])          # warm up
    for r in range(args.rounds):
        for n in names:
            for lib in (libs if r % 2 == 0 else reversed(libs)):   # (each first in turn)
                times[lib][n].append(run_round(libs[lib][n]))
    print(f"{'benchmark':32s} {'mjax':>10s} {'jax':>10s} {'ratio':>6s}  (medians of "
          f"{args.rounds} interleaved rounds)")
    for n in names:
        m, j = statistics.median(times["mjax"][n]), statistics.median(times["jax"][n])
        unit, scale = ("ms", 1e3) if m > 1e-3 else ("us", 1e6)
        print(f"{n:32s} {m * scale:8.1f}{unit} {j * scale:8.1f}{unit} {m / j:6.2f}")


if __name__ == "__main__":
    main()
