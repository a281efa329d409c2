"""JAX's compact jaxpr pretty print, read from a traced `jaxpr` func.

    { lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }
"""
from __future__ import annotations


from mjax.dialect import aval_of
from mjax.dialect.attributes import decode


def _names():
    import itertools
    import string
    for n in itertools.count(1):
        for combo in itertools.product(string.ascii_lowercase, repeat=n):
            yield "".join(combo)


def _fmt_param(v):
    import numpy as np
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, np.ndarray):
        return repr(v.tolist()) if v.size <= 8 else f"array{v.shape}"
    return repr(v) if isinstance(v, str) else str(v)


def pretty_print(func_op, n_consts: int = 0) -> str:
    """Prints a func.func of jaxpr ops the way `jax.make_jaxpr` does."""
    names = _names()
    env: dict = {}
    block = func_op.regions[0].blocks[0]

    def var(v):
        return env[v] if v in env else "?"

    def bind_var(v):
        env[v] = next(names)
        return f"{env[v]}:{aval_of(v.type).str_short()}"

    args = list(block.arguments)
    n_user = len(args) - n_consts
    consts = " ".join(bind_var(a) for a in args[n_user:])
    invars = " ".join(bind_var(a) for a in args[:n_user])
    lines = []
    literal: dict = {}
    for op in block.operations:
        op = op.operation  # (an OpView's `attributes` is its class's schema)
        if op.name == "func.return":
            outs = ", ".join(literal.get(v, None) or var(v) for v in op.operands)
            tail = f"  in ({outs}{',' if len(op.operands) == 1 else ''}) }}"
            break
        if op.name == "jaxpr.constant":
            value = decode(op.attributes["value"])
            if value.ndim == 0 or not any(value.strides):  # scalars and splats inline
                first = value.reshape(-1)[0].item() if value.size else 0
                literal[op.results[0]] = f"{first}:{aval_of(op.results[0].type).str_short()}"
                continue
        ins = " ".join(literal.get(v) or var(v) for v in op.operands)
        params = {name: _fmt_param(decode(op.attributes[name])) for name in op.attributes}
        pstr = ("[" + " ".join(f"{k}={v}" for k, v in params.items()) + "]") if params else ""
        outs = " ".join(bind_var(r) for r in op.results)
        name = op.name.split(".", 1)[1]
        lines.append(f"    {outs} = {name}{pstr} {ins}".rstrip())
    else:
        tail = "  in () }"
    head = f"{{ lambda {consts}; {invars}. let"
    return "\n".join([head] + lines + [tail])


