"""custom_fusion and evaluate: not built yet in mjax (JAX: custom_fusion_lib.py,
custom_evaluate.py). They exist and say so."""
from __future__ import annotations


def custom_fusion(fun):
    """JAX: fuser.custom_fusion (a function with its own pull/push/eval rules)."""
    raise NotImplementedError(
        "fuser.custom_fusion is not implemented yet in mjax (functions with their own "
        "block-spec pull/push, eval and Pallas rules)")


def evaluate(f, *, allow_transpose: bool = True):
    """JAX: fuser.evaluate (evaluating a function with fusion dtypes resolved)."""
    raise NotImplementedError(
        "fuser.evaluate is not implemented yet in mjax (evaluating a function through "
        "custom_fusion's eval rules)")
