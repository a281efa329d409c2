"""Programs run by test_without_jax.py twice: with mjax in a process where `import jax`
is blocked, and with jax in the test process. Each takes the module (mjax or jax) and
returns arrays."""
import numpy as np

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
W = np.linspace(0.5, -0.5, 8, dtype=np.float32).reshape(4, 2)


def jit_and_numpy(jax):
    jnp = jax.numpy
    f = jax.jit(lambda x, w: jnp.tanh(x @ w).sum(axis=0) + jnp.mean(x))
    return [f(X, W), jnp.cumsum(X, axis=1), jnp.sort(X[::-1], axis=0)]


def grad_and_vmap(jax):
    jnp = jax.numpy
    loss = lambda w, x: jnp.sum(jnp.sin(x @ w) ** 2)  # noqa: E731
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0))(W, X)
    return [jax.grad(loss)(W, X), per_example, jax.jacrev(jnp.tanh)(X[0]),
            jax.hessian(lambda v: jnp.sum(v ** 3))(X[0])]


def control_flow(jax):
    jnp, lax = jax.numpy, jax.lax
    carry, ys = lax.scan(lambda c, x: (c * 0.9 + x, jnp.sin(c)), jnp.zeros(4), X)
    w = lax.while_loop(lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * 1.5), (0, 1.0))[1]
    c = lax.cond(X.sum() > 0, lambda v: v * 2, lambda v: v - 1, X)
    return [carry, ys, jnp.asarray(w), c,
            jax.grad(lambda v: lax.scan(lambda a, b: (a * b, a), 1.0, v)[0])(X[0])]


def random_bits(jax):
    key = jax.random.key(42)
    k1, k2 = jax.random.split(key)
    return [jax.random.normal(k1, (3, 2)), jax.random.uniform(k2, (4,)),
            jax.random.randint(jax.random.PRNGKey(3), (5,), 0, 10),
            jax.random.key_data(jax.random.fold_in(key, 7))]


def linalg_fft(jax):
    jnp = jax.numpy
    a = X[:, :3] @ X[:, :3].T + 3 * np.eye(3, dtype=np.float32)
    return [jnp.linalg.cholesky(a), jnp.linalg.solve(a, X[:, 0]), jnp.linalg.det(a),
            jnp.abs(jnp.fft.rfft(X, axis=1))]


def arrays_and_trees(jax):
    jnp = jax.numpy
    x = jnp.arange(6.0).reshape(2, 3)
    tree = jax.tree_util.tree_map(lambda a: a * 2, {"b": x, "a": [x[0], 3.0]})
    leaves = jax.tree_util.tree_leaves(tree)
    return [x.at[0, 1].set(9.0), jnp.asarray(x.sharding.is_fully_replicated),
            jnp.asarray(len(x.devices())), *[jnp.asarray(l) for l in leaves]]


def array_refs(jax):
    jnp = jax.numpy
    acc = jax.new_ref(jnp.zeros(4))          # a jit updates it in place
    before = acc.unsafe_buffer_pointer()

    @jax.jit
    def step(x):
        acc[...] += x
        return x * 2
    step(X[0]), step(X[1])
    out = jax.new_ref(jnp.zeros((3, 2)))
    jax.vmap(lambda x, r: r.__setitem__(..., x @ W), (0, 0))(X, out)
    grads = jax.new_ref(jnp.zeros(4))
    _, f_vjp = jax.vjp(lambda x: jnp.sum(jnp.sin(x)), X[2])
    f_vjp.with_refs(grads)(1.0)
    return [jax.freeze(acc), jax.freeze(out), jax.freeze(grads),
            jnp.asarray(acc.unsafe_buffer_pointer() == before)]


PROGRAMS = [jit_and_numpy, grad_and_vmap, control_flow, random_bits, linalg_fft,
            arrays_and_trees, array_refs]
