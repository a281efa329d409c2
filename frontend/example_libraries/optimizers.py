"""JAX: jax.example_libraries.optimizers: first-order optimizers as triples of functions.

An optimizer is `(init_fun, update_fun, get_params)`:

    opt_init, opt_update, get_params = adam(1e-3)
    state = opt_init(params)                       # params: any pytree of arrays
    state = opt_update(step, grads, state)         # grads: a pytree like params
    params = get_params(state)

Each optimizer is written for one array (`@optimizer` lifts it to pytrees); its state for
one array is itself a pytree (a tuple of arrays), and the whole state is an
`OptimizerState`, a pytree whose leaves are those arrays, so it passes through `jit`.
Step sizes are numbers or schedules (functions of the step number).
"""
from __future__ import annotations

import builtins
from collections import namedtuple  # noqa: F401  (a name JAX's module has)
import functools
from typing import Any, Callable, NamedTuple

from mjax import numpy as jnp
from mjax.base import trace_trees, tree_util

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], float]
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]


class OptimizerState(NamedTuple):
    """The state of a pytree optimizer: each parameter's state flattened
    (`packed_state`), the parameters' tree and each state's tree."""
    packed_state: Any
    tree_def: Any
    subtree_defs: Any


tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def unzip2(xys):
    """([x...], [y...]) of pairs, as two tuples."""
    xs, ys = [], []
    for x, y in xys:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def _zip_checked(*lists):
    n = len(lists[0])
    if any(len(xs) != n for xs in lists[1:]):
        raise ValueError(f"length mismatch: {[len(xs) for xs in lists]}")
    return list(builtins.zip(*lists))


def safe_map(f, *lists):
    return [f(*args) for args in _zip_checked(*lists)]


def safe_zip(*lists):
    return _zip_checked(*lists)


# (the helper names JAX's module has)
map, zip, partial = safe_map, safe_zip, functools.partial   # noqa: A001


def optimizer(opt_maker: Callable[..., tuple[Callable, Callable, Callable]]
              ) -> Callable[..., Optimizer]:
    """Lifts an optimizer for one array (`opt_maker(*args)` -> init, update, get_params
    over one array's state) to one over pytrees of arrays."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = trace_trees.tree_flatten(x0_tree)
            states = [init(x0) for x0 in x0_flat]
            flat_states, subtrees = unzip2(trace_trees.tree_flatten(s) for s in states)
            return OptimizerState(list(flat_states), tree, list(subtrees))

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            packed, tree, subtrees = opt_state
            grads, grad_tree_def = trace_trees.tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(f"optimizer update function was passed a gradient tree that "
                                f"did not match the parameter tree structure with which it "
                                f"was initialized: parameter tree {tree} and grad tree "
                                f"{grad_tree_def}.")
            states = safe_map(tree_util.tree_unflatten, subtrees, packed)
            new_states = safe_map(functools.partial(update, i), grads, states)
            flat_states, new_subtrees = unzip2(trace_trees.tree_flatten(s) for s in new_states)
            for old, new in builtins.zip(subtrees, new_subtrees):
                if old != new:
                    raise TypeError(f"optimizer update function produced an output structure "
                                    f"that did not match its input structure: input {old} "
                                    f"and output {new}.")
            return OptimizerState(list(flat_states), tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            packed, tree, subtrees = opt_state
            states = safe_map(tree_util.tree_unflatten, subtrees, packed)
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states])
        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# ---- optimizers for one array ------------------------------------------------------
@optimizer
def sgd(step_size):
    """Gradient descent: x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0,
            lambda i, g, x: x - step_size(i) * g,
            lambda x: x)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Gradient descent with momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov's accelerated gradient: the step looks ahead along the new velocity."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0])


def _inv_sqrt_where_positive(a):
    return jnp.where(a > 0, 1.0 / jnp.sqrt(jnp.where(a > 0, a, 1.0)), 0.0)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        m = (1.0 - momentum) * (g * _inv_sqrt_where_positive(g_sq)) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: divides the gradient by a running root mean square of gradients."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return init, update, lambda state: state[0]


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba 2015): bias-corrected first and second moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        t = jnp.asarray(i) + 1
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** t)
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** t)
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v
    return init, update, lambda state: state[0]


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm of past gradients."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        t = jnp.asarray(i) + 1
        scale = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** t)
        return x - scale * m / (u + eps), m, u
    return init, update, lambda state: state[0]


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): Adagrad whose accumulator is kept as one vector per axis
    (the max over the other axes), so memory grows with the sum of the dimensions."""
    step_size = make_schedule(step_size)

    def along(ndim, v, axis):
        return v.reshape([-1 if k == axis else 1 for k in range(ndim)])

    def init(x0):
        shape = jnp.shape(x0)
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), vs, shape

    def update(i, g, state):
        x, m, vs, shape = state
        g = jnp.reshape(g, x.shape)
        accum = functools.reduce(jnp.minimum, [along(x.ndim, v, k) for k, v in enumerate(vs)])
        accum = accum + jnp.square(g)
        m = (1.0 - momentum) * (g * _inv_sqrt_where_positive(accum)) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(a for a in range(x.ndim) if a != k)) for k in range(x.ndim)]
        return x, m, vs, shape

    def get_params(state):
        x, _, _, shape = state
        return x.reshape(shape)
    return init, update, get_params


# ---- step-size schedules -----------------------------------------------------------
def constant(step_size) -> Schedule:
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        mult = (1 - step_num / decay_steps) ** power
        return mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """values[k] for steps in (boundaries[k-1], boundaries[k]]; len(values) must be
    len(boundaries) + 1."""
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---- utilities -----------------------------------------------------------------------
def l2_norm(tree):
    """The l2 norm of all the leaves of `tree` taken as one vector."""
    leaves = trace_trees.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """`grad_tree` scaled down so its l2 norm is at most `max_norm`."""
    norm = l2_norm(grad_tree)
    return trace_trees.tree_map(
        lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where a parameter's state tree joins the parameter tree (unpacked states)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """`opt_state` as one pytree (the parameter tree with each state at a JoinPoint),
    e.g. for pickling."""
    packed, tree, subtrees = opt_state
    states = safe_map(tree_util.tree_unflatten, subtrees, packed)
    return tree_util.tree_unflatten(tree, [JoinPoint(s) for s in states])


def pack_optimizer_state(marked_pytree):
    """The OptimizerState of an `unpack_optimizer_state` tree."""
    joins, tree = trace_trees.tree_flatten(marked_pytree,
                                         is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state: expected a tree of JoinPoints (as "
                        "unpack_optimizer_state makes)")
    flat, subtrees = unzip2(trace_trees.tree_flatten(j.subtree) for j in joins)
    return OptimizerState(list(flat), tree, list(subtrees))

