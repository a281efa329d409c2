"""A `jaxpr.shard_map` equation as JAX's make_jaxpr prints it:

    c:f32[6@i] = shard_map[
      check_vma=True
      in_specs=(P('i',), P())
      jaxpr={ lambda ; d:f32[3]{V:i} e:f32[3]. let
          f:f32[3]{V:i} = pvary[axes=('i',)] e
          g:f32[3]{V:i} = mul d f
        in (g,) }
      mesh=AbstractMesh('i': 2, axis_types=(Explicit,), ...)
      newly_manual_axes=frozenset({'i'})
      out_specs=(P('i',),)
    ] a b

The body's values are typed with the manual axes they vary along (`{V:i}`): its
arguments along the axes their in_specs name, each equation's results as the trace's
varying-axes rules say (sharding_types: a result varies along its operands' axes, less
those a psum reduces over, plus those axis_index & co. vary along). With check_vma, JAX
casts an operand that varies along fewer axes than the equation's other operands with
`pvary` first; mjax's trace leaves that cast implicit (its batching broadcasts), so the
printer shows it. `lax.pcast(x, to='varying')` (a marked copy) prints as pvary too.
Values captured from the enclosing trace come first, with in_spec P(), as in JAX.
"""
from __future__ import annotations

import numpy as np

from mjax.dialect.ops.shard_map import entry_axes
from mjax.base.jax_params import CONVERTED
from mjax.lax.parallel import PVARY_MARK
from mjax.passes.ir_util import function_named
from mjax.runtime import get_backend
from mjax.specs.sharding_impls import AxisType, Mesh, PartitionSpec
from mjax.arrays.sharding_types import _trace_op_varying

# Ops JAX does not cast operands of (loops and branches keep their bodies' types).
_NO_CAST = frozenset({"jaxpr.cond", "jaxpr.while", "jaxpr.scan", "jaxpr.shard_map",
                      "jaxpr.call", "jaxpr.custom_jvp_call", "jaxpr.custom_vjp_call",
                      "jaxpr.checkpoint", "jaxpr.copy"})
# Collectives over `axes`: JAX casts their operand to vary along those axes first.
_COLLECTIVES = frozenset({"jaxpr.psum", "jaxpr.pmax", "jaxpr.pmin", "jaxpr.ppermute",
                          "jaxpr.all_to_all", "jaxpr.psum_scatter", "jaxpr.all_gather"})
_REDUCING = frozenset({"jaxpr.psum", "jaxpr.pmax", "jaxpr.pmin"})
_RETURNS = ("func.return", "jaxpr.yield")


def _spec(entries, unreduced=(), reduced=()) -> PartitionSpec:
    return PartitionSpec(*[None if not e else (entry_axes(e)[0] if len(entry_axes(e)) == 1
                                               else entry_axes(e)) for e in entries],
                         unreduced=set(unreduced or ()), reduced=set(reduced or ()))


def _specs(p, what: str, partial: str) -> list:
    """The op's in_specs / out_specs as JAX's PartitionSpecs (with the axes its
    in_reduced / out_unreduced name)."""
    extra = p.get(partial) or [()] * len(p[what])
    key = "reduced" if partial == "in_reduced" else "unreduced"
    return [_spec(s, **{key: u}) for s, u in zip(p[what], extra)]


# The casts between partial and varying values, JAX's primitives: a pcast to 'unreduced'
# in the body, and the cast of a reduced cotangent back to varying the transposition
# makes (frontend/spmd/shard_map_op.py, passes/shard_map_ad.py).
_PARTIAL_CASTS = {"mjax.unreduced_cast": "vary_unreduced_cast_p",
                  "mjax.reduced_vary_cast": "reduced_vary_cast_p"}


def _mesh(p):
    """The op's mesh: abstract where the user gave it so (its devices' kind and platform
    as JAX shows them), else the concrete one."""
    axes, shape = tuple(p["mesh_axes"]), tuple(p["mesh_shape"])
    types = tuple(getattr(AxisType, t) for t in p["axis_types"]) if p["axis_types"] \
        else None
    ids = p["device_ids"] or tuple(range(int(np.prod(shape))))
    by_id = {d.id: d for d in get_backend().devices()}
    devices = np.empty(len(ids), dtype=object)
    devices[:] = [by_id[i] for i in ids]
    mesh = Mesh(devices.reshape(shape), axes, axis_types=types)
    return mesh.abstract_mesh if p.get("abstract_mesh") else mesh


class _V:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _axes_of(op) -> frozenset:
    return frozenset(str(a).strip('"') for a in op.attributes["axes"]) \
        if "axes" in op.attributes else frozenset()


def _returned(block) -> list:
    last = list(block.operations)[-1].operation
    return list(last.operands) if last.name in _RETURNS else []


class BodyTypes:
    """The varying axes of a shard_map body's values (its block, and the bodies of the
    loops, branches and nested jits in it), and the pvary casts JAX's check_vma makes
    there."""

    def __init__(self, op, block):
        p = op.opview.params
        self.order = tuple(p["mesh_axes"])
        self.check = bool(p["check_vma"])
        self.block = block
        self.blocks: list = []
        self.varying: dict = {}
        self.partial: dict = {}       # value -> "{U:..}" / "{R:..}" (reduced operands)
        for arg, spec, red in zip(block.arguments, p["in_specs"],
                                  p["in_reduced"] or [()] * len(p["in_specs"])):
            self.varying[arg] = frozenset(a for e in spec for a in entry_axes(e))
            if red:
                self.partial[arg] = "R:" + self._axes_text(red)
        self._walk(block)

    def _axes_text(self, axes) -> str:
        axes = [a for a in self.order if a in axes]
        return axes[0] if len(axes) == 1 else "(" + ",".join(axes) + ")"

    def _get(self, v) -> frozenset:
        return self.varying.get(v, frozenset())

    def _set(self, values, axes_list) -> None:
        for v, axes in zip(values, axes_list):
            if axes:
                self.varying[v] = frozenset(axes)

    def _walk(self, block) -> None:
        if not any(b == block for b in self.blocks):
            self.blocks.append(block)
        for o in block.operations:
            o = o.operation
            if o.name in _RETURNS or not len(o.results):
                continue
            ins = [self._get(v) for v in o.operands]
            every = frozenset().union(*ins)
            if "mjax.reduced_vary_cast" in o.attributes:
                self._set(o.results, [every | frozenset(
                    str(a).strip('"') for a in o.attributes["mjax.reduced_vary_cast"])])
                continue
            if "mjax.unreduced_cast" in o.attributes:
                self.partial[o.results[0]] = "U:" + self._axes_text(
                    [str(a).strip('"') for a in o.attributes["mjax.unreduced_cast"]])
            if PVARY_MARK in o.attributes:
                self._set(o.results, [every | frozenset(
                    str(a).strip('"') for a in o.attributes[PVARY_MARK])])
            elif o.name in _COLLECTIVES:
                axes = _axes_of(o)
                cast = every | axes if self.check else every
                self._set(o.results, [cast - axes if o.name in _REDUCING else cast]
                          * len(o.results))
            elif o.name in ("jaxpr.cond", "jaxpr.while", "jaxpr.scan", "jaxpr.call"):
                self._set(o.results, self._nested(o, ins))
            elif len(o.regions) or not o.name.startswith("jaxpr."):
                self._set(o.results, [every] * len(o.results))
            else:
                try:
                    _trace_op_varying(self.varying, type(o.opview),
                                      [_V(v) for v in o.operands],
                                      [_V(r) for r in o.results], o.opview.params)
                except Exception:  # noqa: BLE001
                    self._set(o.results, [every] * len(o.results))

    def _run(self, block, seeds) -> list:
        for arg, axes in zip(block.arguments, seeds):
            self.varying.pop(arg, None)
            self._set([arg], [axes])
        self._walk(block)
        return [self._get(v) for v in _returned(block)]

    def _nested(self, o, ins) -> list:
        """The results' varying axes of a branch, loop or nested jit, whose bodies are
        typed from the operands (a loop's carries also from what its body returns)."""
        n = len(o.results)
        if o.name == "jaxpr.call":
            fn = function_named(o, str(o.attributes["callee"]).lstrip("@").strip('"'))
            return self._run(fn.regions[0].blocks[0], ins) if fn is not None else [
                frozenset().union(*ins)] * n
        blocks = [r.blocks[0] for r in o.regions]
        p = o.opview.params
        if o.name == "jaxpr.cond":
            outs = [frozenset(ins[0])] * n
            for b in blocks:
                outs = [a | c for a, c in zip(outs, self._run(b, ins[1:]))]
            return outs
        if o.name == "jaxpr.while":
            nc, nb = p["cond_nconsts"], p["body_nconsts"]
            carry = list(ins[nc + nb:])
            for _ in range(2):
                self._run(blocks[0], ins[:nc] + carry)
                carry = [a | c for a, c in zip(carry, self._run(blocks[1], ins[nc:nc + nb]
                                                                  + carry))]
            return carry
        nc, ncarry = p["num_consts"], p["num_carry"]
        carry, xs = list(ins[nc:nc + ncarry]), list(ins[nc + ncarry:])
        outs = []
        for _ in range(2):
            outs = self._run(blocks[0], ins[:nc] + carry + xs)
            carry = [a | c for a, c in zip(carry, outs[:ncarry])]
        return carry + outs[ncarry:]

    def suffix(self, v) -> str:
        if v in self.partial and self.check:
            return "{" + self.partial[v] + "}"
        axes = [a for a in self.order if a in self._get(v)]
        if not axes or not self.check:    # (without check_vma JAX types nothing)
            return ""
        return "{V:" + (axes[0] if len(axes) == 1 else "(" + ",".join(axes) + ")") + "}"

    def casts(self, printer, op, indent: int) -> list[str]:
        """The pvary equations JAX puts before `op`; the printer then names the cast
        values in op's operands (printer.override)."""
        if not self.check or op.name in _NO_CAST or len(op.regions) or \
                PVARY_MARK in op.attributes:
            return []
        if op.name in _COLLECTIVES:
            want = _axes_of(op) | frozenset().union(*[self._get(v) for v in op.operands])
        elif len(op.operands) >= 2:
            want = frozenset().union(*[self._get(v) for v in op.operands])
        else:
            return []
        lines = []
        for v in op.operands:
            missing = [a for a in self.order if a in want and a not in self._get(v)]
            if not missing or v in printer.override:
                continue
            shown = printer.var(v)
            text = shown.rsplit(":", 1)[1] if v in printer.literal and ":" in shown \
                else printer.type_text(_unbroadcast(v))
            name = next(printer.names)
            have = [a for a in self.order if a in want]
            vma = "{V:" + (have[0] if len(have) == 1 else "(" + ",".join(have) + ")") + "}"
            lines.append(f"{' ' * indent}{name}:{text.split('{')[0]}{vma} = "
                         f"pvary[axes={tuple(missing)!r}] {shown}")
            printer.override[v] = name
        return lines


def _names(text: str) -> list:
    return [a.strip("'\" ") for a in text.strip("()").split(",") if a.strip("'\" ")]


def as_jax_eqn(body, op, name: str, params: dict):
    """(name, params) of a collective in a shard_map body as JAX's equation shows it: a
    psum is JAX's psum_invariant under check_vma, psum_scatter its reduce_scatter; the
    axes are JAX's axis_name (one name for axis_index and all_to_all); reductions show
    axis_index_groups."""
    for mark, prim in _PARTIAL_CASTS.items():
        if mark in op.attributes:
            return prim, {"axes": repr(tuple(str(a).strip('"') for a in op.attributes[mark]))}
    axes = params.get("axes")
    if name == "psum" and body.check:
        return "psum_invariant", {"axes": axes}
    if name in ("psum", "pmax", "pmin"):
        return name, {**params, "axis_index_groups": "None"}
    if axes is None:
        return name, params
    rest = {k: v for k, v in params.items() if k != "axes"}
    one = _names(axes)[0] if len(_names(axes)) == 1 else axes
    if name == "axis_index":
        return name, {"axis_name": one}
    if name == "ppermute":
        return name, {**rest, "axis_name": axes}
    if name == "all_to_all":
        rest.pop("axis_size", None)
        return name, {**rest, "axis_index_groups": "None", "axis_name": one}
    if name == "psum_scatter":
        return "reduce_scatter", {**rest, "axis_index_groups": "None", "axis_name": axes}
    if name == "all_gather":
        dim = rest.pop("axis", "0")
        return name, {**rest, "all_gather_dimension": dim, "axis_index_groups": "None",
                      "axis_name": axes}
    return name, params


def _unbroadcast(v):
    """The value an implicit broadcast (which the printer leaves out) broadcasts."""
    owner = v.owner
    op = getattr(owner, "operation", None)
    while op is not None and "mjax.implicit_broadcast" in op.attributes:
        v = op.operands[0]
        op = getattr(v.owner, "operation", None)
    return v


def shard_map_eqn(printer, op, block, pad: str, outs: str, indent: int) -> str:
    """The equation's text (see the module docstring)."""
    p = op.opview.params
    n_cap = int(p["num_captured"])
    specs = [PartitionSpec()] * n_cap + _specs(p, "in_specs", "in_reduced")
    operands = list(op.operands)
    operands = operands[len(operands) - n_cap:] + operands[:len(operands) - n_cap]
    ins = " ".join(printer.var(v) for v in operands)
    params = {"check_vma": str(bool(p["check_vma"])),
              "in_specs": repr(tuple(specs)),
              "mesh": str(_mesh(p)),
              "newly_manual_axes": "frozenset({" + ", ".join(map(repr, p["manual_axes"])) +
                                   "})",
              "out_specs": repr(tuple(_specs(p, "out_specs", "out_unreduced")))}
    lhs = f"{pad}{outs + ' = ' if outs else ''}shard_map["
    lines = [lhs]
    if block is not None:
        body = BodyTypes(op, block)
        printer.bodies.append(body)
        try:
            params["jaxpr"] = printer.jaxpr(block, indent + 2, col=indent + 8,
                                            n_captured=n_cap)
        finally:
            printer.bodies.remove(body)
    for key in sorted(params):
        lines.append(f"{pad}  {key}={params[key]}")
    lines.append(f"{pad}] {ins}".rstrip())
    return "\n".join(lines)


def jax_params(params: dict, out_avals) -> dict:
    """An equation's params as JAX's shard_map equation has them."""
    n_cap = int(params.get("num_captured") or 0)
    p = {**params, "device_ids": params.get("device_ids"),
         "axis_types": params.get("axis_types")}
    return {"mesh": _mesh(p),
            "in_specs": tuple(_specs(params, "in_specs", "in_reduced") +
                              [PartitionSpec()] * n_cap),     # (in the operands' order)
            "out_specs": tuple(_specs(params, "out_specs", "out_unreduced")),
            "jaxpr": params.get("jaxpr"),
            "check_vma": bool(params.get("check_vma", True)),
            "newly_manual_axes": frozenset(params["manual_axes"])}


CONVERTED["shard_map"] = jax_params


def body_of(printer, block):
    """The BodyTypes typing `block` (a shard_map body or a body in it; None: none)."""
    return next((b for b in reversed(printer.bodies)
                 if any(x == block for x in b.blocks)), None)


__all__ = ["BodyTypes", "as_jax_eqn", "body_of", "shard_map_eqn"]
