"""Rematerialization policies for `checkpoint(policy=...)`. JAX: jax.checkpoint_policies.

A policy decides which values computed inside a checkpointed function reverse mode may
save for the backward pass (the rest are recomputed there). JAX's policies are
predicates over primitives; here each is a small description that travels to the
`--jaxpr-vjp` pass as the `policy` attribute of `jaxpr.checkpoint`:

    checkpoint(f, policy=checkpoint_policies.everything_saveable)
      -> "jaxpr.checkpoint"(%x) {callee = @f, policy = "everything_saveable"}

    checkpoint(f, policy=save_only_these_names("h"))
      -> "jaxpr.checkpoint"(%x) {callee = @f, names = ["h"],
                                 policy = "save_only_these_names"}

`nothing_saveable` (the default) saves only the inputs, `everything_saveable` every
residual; the selective ones (dots, names given by `checkpoint_name`, and
save_from_both_policies(dots_saveable, save_only_these_names(...))) are applied by
passes/rules/remat.py. Any other callable (JAX: `policy(prim, *avals, **params)`, e.g.
`lambda prim, *_, **__: str(prim) != 'all_gather'`) and other combinations are
registered with the pass, which calls them on each op (`policy = "callable"`, the key in
`names`); these Policy objects are such callables too. The offloading policies
(`Offloadable(src, dst)` results) save what they offload, in device memory: the program
is the one JAX compiles for CPU, whose device_put to host memory lowers to nothing (on
GPU and TPU JAX's would hold those residuals in host memory). Under jax_remat3
`for_remat3` maps a policy to what JAX 0.10.2's new remat saves.
"""
from __future__ import annotations

from typing import NamedTuple

from mjax.passes.rules.remat import NAMED_POLICIES, register_callable_policy


class RecomputeType:
    """What a policy returns for a value to recompute. JAX: ad_checkpoint.Recompute."""

    def __bool__(self):      # (not saved)
        return False


class SaveableType:
    """What a policy returns for a value to save. JAX: ad_checkpoint.Saveable."""


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
    """What a policy returns for a value to save in memory `dst` (moved from `src`).
    JAX: ad_checkpoint.Offloadable."""
    src: str
    dst: str


class Policy:
    """A named rematerialization policy; `kind` and `names` describe it."""

    def __init__(self, kind: str, names=(), parts=(), n_saved=None):
        self.kind, self.names, self.parts = kind, tuple(names), tuple(parts)
        self.n_saved = n_saved      # (save_and_offload: names[:n_saved] are the saved)
        self.__name__ = kind

    def __call__(self, prim, *avals, **params):
        """Whether a value computed by `prim` may be saved (JAX's policy signature), so
        Python policies can build on these."""
        name = getattr(prim, "name", str(prim))
        kind = self.kind
        if kind == "save_from_both_policies":
            return any(bool(p(prim, *avals, **params)) for p in self.parts)
        if kind in ("everything_saveable", "save_anything_except_these_names"):
            return True     # (see save_anything_except_these_names)
        if kind == "nothing_saveable":
            return False
        if kind == "offload_dot_with_no_batch_dims":    # (JAX's: Offloadable or Recompute)
            if name != "dot_general" or any(
                    len(b) for b in params["dimension_numbers"][1]):
                return Recompute
            return Offloadable(*self.parts)
        if kind in ("dots_saveable", "dots_with_no_batch_dims_saveable"):
            if name == "conv_general_dilated":
                return kind == "dots_saveable"
            if name != "dot_general":
                return False
            (_, batch) = params["dimension_numbers"]
            return kind == "dots_saveable" or not any(len(b) for b in batch)
        if name != "name":
            return False
        if kind == "save_and_offload_only_these_names":
            if params["name"] in self.names[:self.n_saved]:
                return Saveable
            return Offloadable(*self.parts) if params["name"] in self.names else Recompute
        if kind == "save_only_these_names":
            return params["name"] in self.names
        return params["name"] not in self.names     # save_any_names_but_these

    def __repr__(self):
        if self.parts:
            return f"{self.kind}({', '.join(map(repr, self.parts))})"
        if self.kind in _NAMED:
            return f"{self.kind}({', '.join(map(repr, self.names))})"
        return self.kind


_NAMED = ("save_only_these_names", "save_any_names_but_these",
          "save_anything_except_these_names")
_IMPLEMENTED = ("nothing_saveable", "everything_saveable", "dots_saveable",
                "dots_with_no_batch_dims_saveable") + _NAMED

everything_saveable = Policy("everything_saveable")
nothing_saveable = Policy("nothing_saveable")
dots_saveable = Policy("dots_saveable")
checkpoint_dots = dots_saveable
dots_with_no_batch_dims_saveable = Policy("dots_with_no_batch_dims_saveable")
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable
NAMED_POLICIES.update((p.kind, p) for p in (everything_saveable, nothing_saveable,
                                            dots_saveable, dots_with_no_batch_dims_saveable))


def save_only_these_names(*names):
    """Saves only values named (checkpoint_name) with one of `names`."""
    return Policy("save_only_these_names", names)


def save_any_names_but_these(*names):
    """Saves named values except those named with one of `names`."""
    return Policy("save_any_names_but_these", names)


def save_anything_except_these_names(*names):
    """Meant to save every value except those named with one of `names`; JAX 0.10.2's
    saves every value, the names notwithstanding, and so does mjax's."""
    return Policy("save_anything_except_these_names", names)


def save_from_both_policies(policy_1, policy_2):
    """Saves what either policy saves."""
    return Policy("save_from_both_policies", parts=(policy_1, policy_2))


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """dots_with_no_batch_dims_saveable, with the saved dots offloaded from memory
    `offload_src` to `offload_dst` (saved in device memory: see the module's doc)."""
    return Policy("offload_dot_with_no_batch_dims", parts=(offload_src, offload_dst))


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src,
                                      offload_dst):
    """save_only_these_names(names_which_can_be_saved), plus the names whose values are
    offloaded from `offload_src` to `offload_dst` (saved in device memory: see the
    module's doc)."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    both = saved & offloaded
    if both:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded={offloaded} "
            f"and the intersection={both}")
    return Policy("save_and_offload_only_these_names", sorted(saved) + sorted(offloaded),
                  parts=(offload_src, offload_dst), n_saved=len(saved))


def _dot_general_only(prim, *avals, **params):
    return getattr(prim, "name", str(prim)) == "dot_general"


def for_remat3(policy):
    """The policy `checkpoint` applies under jax_remat3 (JAX 0.10.2's new remat): only
    checkpoint_name'd values (the name policies; everything_saveable: every name) and
    dot_general results (the dots policies) may be saved; any other policy, offloading
    ones and Python callables included, rematerializes everything (None)."""
    if not isinstance(policy, Policy):
        return None
    if policy.kind in ("save_only_these_names", "save_any_names_but_these",
                       "dots_with_no_batch_dims_saveable"):
        return policy
    if policy.kind == "everything_saveable":
        return save_any_names_but_these()
    if policy.kind == "dots_saveable":
        return _dot_general_only    # (not convolutions)
    return None


def _simplify(policy: Policy) -> Policy:
    """Reduces combinations to an equivalent single policy where one exists."""
    if policy.kind != "save_from_both_policies":
        return policy
    a, b = (_simplify(p) if isinstance(p, Policy) else p for p in policy.parts)
    for p, q in ((a, b), (b, a)):
        if isinstance(p, Policy) and p.kind == "everything_saveable":
            return p
        if isinstance(p, Policy) and p.kind == "nothing_saveable":
            return q
    return policy


def encode(policy) -> dict:
    """The attributes of jaxpr.checkpoint for a policy (`policy`, and `names` for the
    name-based ones); {} for the default (None). Raises NotImplementedError
    for policies the pass lacks."""
    if policy is None:
        return {}
    if not isinstance(policy, Policy):
        if not callable(policy):
            raise TypeError(f"checkpoint policy must be callable, got {policy!r}")
        # Evaluated by the pass on each op of the checkpointed function.
        return {"policy": "callable", "names": [register_callable_policy(policy)]}
    simple = _simplify(policy)
    if simple.kind == "save_and_offload_only_these_names":
        simple = save_only_these_names(*simple.names)
    elif simple.kind == "offload_dot_with_no_batch_dims":
        simple = dots_with_no_batch_dims_saveable
    if simple.kind == "save_from_both_policies":
        kinds = {p.kind: p for p in simple.parts if isinstance(p, Policy)}
        if set(kinds) == {"dots_saveable", "save_only_these_names"}:
            return {"policy": "dots_or_names",
                    "names": list(kinds["save_only_these_names"].names)}
    if simple.kind not in _IMPLEMENTED:
        # Other combinations: the pass evaluates the combined predicate per op.
        return {"policy": "callable", "names": [register_callable_policy(simple)]}
    if simple.kind == "nothing_saveable":
        # (the default's behavior, but named: make_jaxpr prints the policy given)
        return {"policy": "nothing_saveable"}
    if simple.kind in _NAMED:
        return {"policy": simple.kind, "names": list(simple.names)}
    return {"policy": simple.kind}


__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint_dots", "checkpoint_dots_with_no_batch_dims", "dots_saveable",
           "dots_with_no_batch_dims_saveable", "everything_saveable", "nothing_saveable",
           "offload_dot_with_no_batch_dims", "save_and_offload_only_these_names",
           "save_any_names_but_these", "save_anything_except_these_names",
           "save_from_both_policies", "save_only_these_names", "for_remat3"]
