"""Fit a small MLP to y = sin(3x) with hand-written SGD under `jit`, and show the IR stages.

    python examples/fit_mlp.py
"""
import numpy as np

import mjax as jax
import mjax.numpy as jnp


def init(rng, sizes=(1, 32, 32, 1)):
    return [(jnp.asarray(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m)),
             jnp.zeros((n,))) for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


@jax.jit
def sgd_step(params, x, y, lr):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    new = [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return new, value


def main():
    rng = np.random.default_rng(0)
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(-1, 1)
    y = np.sin(3 * x)
    params = init(rng)

    print("== jaxpr (JAX's compact form) of the loss ==")
    print(jax.make_jaxpr(loss)(params, x, y))
    print("== the same, as jaxpr-dialect MLIR (first lines) ==")
    print("\n".join(jax.make_jaxpr(loss)(params, x, y).mlir.splitlines()[:8]))
    lowered = jax.jit(loss).lower(params, x, y)
    print("== StableHLO after --jaxpr-to-stablehlo (first lines) ==")
    print("\n".join(lowered.as_text().splitlines()[:8]))
    print("== XLA cost analysis:", {k: v for k, v in lowered.compile().cost_analysis().items()
                                    if k in ("flops", "transcendentals")})

    for step in range(301):
        params, value = sgd_step(params, x, y, 0.05)
        if step % 50 == 0:
            print(f"step {step:4d}  loss {float(value):.5f}")
    final = float(loss(params, x, y))
    print(f"final loss {final:.5f}")
    return final


if __name__ == "__main__":
    main()
