"""Edits of a whole module around the compile pipeline (the jit path's): a copy that keeps
what the tracer found of it, names for @main's arguments, donated arguments aliased to
results, per-argument and per-result attributes of @main."""
from __future__ import annotations

import warnings

from jaxlib.mlir import ir

from mjax.dialect.context import context
from mjax.dialect.symbols import main_function
from mjax.dialect.types import aval_of
from mjax.passes.analyses import copy_facts


def clone_module(module):
    """A deep copy of `module` (ops, attributes, locations) in mjax's context: the C++
    clone of each top-level op, ~30x cheaper than printing and parsing the module."""
    with context():
        new = ir.Module.create(module.operation.location)
        ip = ir.InsertionPoint(new.body)
        for op in module.body.operations:
            op.operation.clone(ip=ip)
        attrs = module.operation.attributes
        for i in range(len(attrs)):
            named = attrs[i]
            new.operation.attributes[named.name] = named.attr
    copy_facts(module, new)      # (what the tracer found of the module: passes/analyses.py)
    return new


def name_main_arguments(module, names) -> None:
    """Gives @main's arguments the locations loc("<name>") (JAX's lowering names them by
    what they are passed to), as many as `names` has."""
    main = main_function(module)
    if main is None:
        return
    with context():
        args = main.regions[0].blocks[0].arguments
        for i, name in enumerate(list(names)[:len(args)]):
            args[i].set_location(ir.Location.name(name))


def alias_donated_inputs(module, donated, aliases=None) -> None:
    """Marks each donated argument of @main `tf.aliasing_output = j` for the first
    unclaimed result of its shape and dtype (JAX: mlir._set_up_aliases), after the pairs
    of `aliases` ({argument: result}); warns, as JAX does, about donated arguments no
    result can reuse."""
    aliases = aliases or {}
    main = main_function(module).opview
    ftype = ir.FunctionType(main.type)
    free: dict = {}
    for j, t in enumerate(ftype.results):
        if j not in aliases.values():
            free.setdefault(str(t), []).append(j)
    unused = []
    with context():
        # (a DictAttr iterates over NamedAttributes: sharded arguments have some)
        attrs = [{n.name: n.attr for n in ir.DictAttr(a)} if a is not None else {}
                 for a in (main.arg_attrs if "arg_attrs" in main.attributes
                           else [None] * len(ftype.inputs))]

        def alias(i, j):
            attrs[i] = {**{k: attrs[i][k] for k in attrs[i]},
                        "tf.aliasing_output": ir.IntegerAttr.get(
                            ir.IntegerType.get_signless(32), j)}
        for i, j in aliases.items():
            alias(i, j)
        for i, (t, d) in enumerate(zip(ftype.inputs, donated)):
            if not d or i in aliases:
                continue
            slots = free.get(str(t))
            if slots:
                alias(i, slots.pop(0))
            else:
                unused.append(_aval_text(t))
        main.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])
    if unused:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unused)}.\n"
                      f"See an explanation at "
                      f"https://docs.jax.dev/en/latest/faq.html#buffer-donation.")


def _aval_text(t) -> str:
    a = aval_of(t)
    return f"ShapedArray({a.dtype.name}[{','.join(map(str, a.shape))}])"


__all__ = ["alias_donated_inputs", "clone_module", "name_main_arguments"]
