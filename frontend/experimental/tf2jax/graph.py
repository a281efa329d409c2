"""TensorFlow GraphDefs and FunctionDefs read into one plain form the interpreter walks.

Both become a `Graph`: nodes with decoded attributes (NumPy dtypes, tuples, arrays) and
data inputs as (node name, output index) pairs, so converting runs without TensorFlow.
A FunctionDef names its inputs `node:output_arg:index`; the flat index is found from the
op's definition (how many tensors each output argument holds).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class Resource:
    """A variable's handle flowing through the graph: `ReadVariableOp` looks it up."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"Resource({self.name!r})"


@dataclass
class Node:
    name: str
    op: str
    inputs: list          # [(node name, output index)], data inputs only
    control: list         # names of nodes this one waits for
    attrs: dict


@dataclass
class Graph:
    """A graph to run: `inputs` are node names whose values the caller supplies."""
    where: str            # for errors: "function 'f_body_12'" or "the graph of 'f'"
    nodes: dict
    inputs: list
    outputs: list         # [(node name, output index)]
    input_names: list = field(default_factory=list)


# ---- attributes -----------------------------------------------------------------------------
def numpy_dtype(enum: int):
    """A TF DataType enum as a NumPy dtype; "resource" or "variant" for handles."""
    import tensorflow as tf
    dt = tf.dtypes.as_dtype(enum)
    if dt == tf.resource:
        return "resource"
    if dt == tf.variant:
        return "variant"
    if dt == tf.string:
        return "string"
    return np.dtype(dt.as_numpy_dtype)


def _shape(proto):
    if proto.unknown_rank:
        return None
    return tuple(d.size for d in proto.dim)


def _decode_list(lst):
    import tensorflow as tf
    for kind in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        vals = getattr(lst, kind)
        if len(vals):
            if kind == "s":
                return [v.decode(errors="replace") for v in vals]
            if kind == "type":
                return [numpy_dtype(v) for v in vals]
            if kind == "shape":
                return [_shape(v) for v in vals]
            if kind == "tensor":
                return [tf.make_ndarray(v) for v in vals]
            if kind == "func":
                return [v.name for v in vals]
            return list(vals)
    return []


def decode_attr(value):
    """One AttrValue as a Python value. `module` (XlaCallModule) stays bytes."""
    import tensorflow as tf
    kind = value.WhichOneof("value")
    if kind == "s":
        return value.s
    if kind in ("i", "f", "b"):
        return getattr(value, kind)
    if kind == "type":
        return numpy_dtype(value.type)
    if kind == "shape":
        return _shape(value.shape)
    if kind == "tensor":
        return tf.make_ndarray(value.tensor)
    if kind == "list":
        return _decode_list(value.list)
    if kind == "func":
        return value.func.name
    return None


def _decode_attrs(attr_map) -> dict:
    attrs = {}
    for k, v in attr_map.items():
        val = decode_attr(v)
        if isinstance(val, bytes) and k not in ("module",):
            val = val.decode(errors="replace")
        attrs[k] = val
    return attrs


# ---- GraphDef -------------------------------------------------------------------------------
def _graph_input(ref: str):
    if ref.startswith("^"):
        return None, ref[1:]
    name, _, idx = ref.partition(":")
    return (name, int(idx) if idx else 0), None


def from_graph_def(graph_def, input_names, output_refs, where: str) -> Graph:
    nodes = {}
    for nd in graph_def.node:
        inputs, control = [], []
        for ref in nd.input:
            data, ctl = _graph_input(ref)
            (inputs.append(data) if data else control.append(ctl))
        nodes[nd.name] = Node(nd.name, nd.op, inputs, control, _decode_attrs(nd.attr))
    outputs = [_graph_input(r)[0] for r in output_refs]
    return Graph(where, nodes, list(input_names), outputs, list(input_names))


# ---- FunctionDef ----------------------------------------------------------------------------
def _arg_sizes(op: str, attrs: dict, library: dict) -> dict:
    """Output argument name -> (first flat index, count) for a node of type `op`."""
    from tensorflow.python.framework import op_def_registry
    if op in library:
        return {a.name: (i, 1) for i, a in enumerate(library[op].signature.output_arg)}
    op_def = op_def_registry.get(op)
    if op_def is None:
        return {}
    defaults = {a.name: decode_attr(a.default_value) for a in op_def.attr
                if a.HasField("default_value")}
    sizes, pos = {}, 0
    for arg in op_def.output_arg:
        if arg.number_attr:
            n = attrs.get(arg.number_attr, defaults.get(arg.number_attr))
        elif arg.type_list_attr:
            n = len(attrs.get(arg.type_list_attr, defaults.get(arg.type_list_attr)) or [])
        else:
            n = 1
        sizes[arg.name] = (pos, n)
        pos += n
    return sizes


def from_function_def(fdef, library: dict) -> Graph:
    """`library`: function name -> FunctionDef (for calls of library functions as ops)."""
    name = fdef.signature.name
    where = f"function '{name}'"
    args = [a.name for a in fdef.signature.input_arg]
    raw = {}
    for nd in fdef.node_def:
        raw[nd.name] = (nd, _decode_attrs(nd.attr))
    sizes = {n: _arg_sizes(nd.op, attrs, library) for n, (nd, attrs) in raw.items()}

    def ref(r: str):
        parts = r.split(":")
        if len(parts) == 1:
            return (parts[0], 0)
        node, arg = parts[0], parts[1]
        idx = int(parts[2]) if len(parts) > 2 else 0
        start = sizes.get(node, {}).get(arg)
        if start is None:
            raise ValueError(f"tf2jax: cannot resolve the input '{r}' in {where}: the "
                             f"outputs of the op of node '{node}' are unknown")
        return (node, start[0] + idx)

    nodes = {a: Node(a, "_Arg", [], [], {}) for a in args}
    for n, (nd, attrs) in raw.items():
        inputs, control = [], []
        for r in nd.input:
            if r.startswith("^"):
                control.append(r[1:])
            else:
                inputs.append(ref(r))
        nodes[n] = Node(n, nd.op, inputs, control, attrs)
    outputs = [ref(fdef.ret[a.name]) for a in fdef.signature.output_arg]
    return Graph(where, nodes, args, outputs, args)
