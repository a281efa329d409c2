"""JAX's jaxpr as Python objects (`Jaxpr`, `JaxprEqn`, `Var`, `Literal`), read from a
function of the `jaxpr` dialect, and `eval_jaxpr`, which evaluates one equation by equation.

`make_jaxpr(f)(...).jaxpr` is such a view of the traced function, so interpreters written
for JAX's jaxprs run on mjax as they are:

    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)

An equation is one op. Its `primitive` is the op's Primitive object (mjax/tracing/primitive.py;
for a user-defined primitive, the user's own object) and its `params` the op's
attributes as Python values, which `bind` takes back. Ops with bodies give them as
ClosedJaxprs under JAX's parameter names, and their Primitive objects' `bind` takes those
(`REGION_BINDS`, filled below): cond `branches`; while `cond_jaxpr`/`body_jaxpr`; scan `jaxpr`;
a nested jit (jaxpr.call) `jaxpr` and `name`; reduce/reduce_window `jaxpr`; checkpoint
`jaxpr`; custom_jvp_call/custom_vjp_call `call_jaxpr` (and `jvp_jaxpr` when the rule was
traced into the module: eval_jaxpr then keeps it; a rule still held in Python is not
carried by the view, so evaluating such an equation runs the primal function only).
A constant is a `Literal`; the last `n_consts` arguments of the top function (what the
trace captured) are the `constvars`.
"""
from __future__ import annotations

import itertools
import re
from typing import Sequence

from mjax import lax
from mjax.tracing.core import current_trace
from mjax.dialect import OPS, aval_of
from mjax.dialect.attributes import Symbol, decode
from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.region_reductions import ReduceOp, ReduceWindowOp
from mjax.dialect.ops.shard_map import ShardMapOp
from mjax.dialect.ops.structural import BroadcastInDimOp, ConvertElementTypeOp, ExpandDimsOp
from mjax.dialect.ops.user import UserPrimitiveOp
from mjax.dialect.types import KeyType
from mjax.base.jax_params import as_jax_params
from mjax.lax.precision import precision_from_attr
from mjax.passes import custom_rules
from mjax.jaxpr.pretty import callee_block
from mjax.tracing.primitive import no_effects, primitive_of
from mjax.tracing.registration import EVAL_JAXPR, JIT, REGION_BINDS
from mjax.tracing.staging import user_name

_counter = itertools.count()


class Var:
    """A variable of a jaxpr: one value, of type `aval`."""

    def __init__(self, aval, initial_qdd=None, final_qdd=None):
        self.aval = aval
        self.count = next(_counter)
        self.suffix = ""

    def __repr__(self):      # (as JAX's: the object's id, the full dtype name, no weak mark)
        aval = self.aval
        if getattr(aval, "weak_type", False):
            aval = aval.strip_weak_type()
        return f"Var(id={id(self)}):{aval}"


class DropVar(Var):
    """An equation's output nothing reads."""

    def __repr__(self):
        return "_"


class Literal:
    """A constant operand of an equation (`val`: a NumPy value of type `aval`)."""

    def __init__(self, val, aval):
        self.val, self.aval = val, aval

    def __repr__(self):
        # (JAX keeps a Python scalar's literal as a TypedInt/TypedComplex, which print
        # their dtype; a float's prints as the number. mjax's constants do not record
        # that they came from a Python scalar, which nearly every scalar literal does.)
        aval = self.aval
        if getattr(aval, "shape", None) == ():
            kind = getattr(aval.dtype, "kind", "")
            if kind in ("i", "u"):
                return f"Literal(TypedInt({int(self.val)}, dtype={aval.dtype.name}))"
            if kind == "c":
                return f"Literal(TypedComplex({complex(self.val)}, dtype={aval.dtype.name}))"
        return f"Literal({self.val})"


class JaxprEqn:
    """One equation: `outvars = primitive[params] invars`."""

    def __init__(self, invars, outvars, primitive, params, effects=no_effects,
                 source_info=None, ctx=None):
        self.invars, self.outvars = list(invars), list(outvars)
        self.primitive, self.params = primitive, dict(params)
        self.effects, self.source_info, self.ctx = effects, source_info, ctx

    def replace(self, **changes) -> "JaxprEqn":
        fields = dict(invars=self.invars, outvars=self.outvars, primitive=self.primitive,
                      params=self.params, effects=self.effects,
                      source_info=self.source_info, ctx=self.ctx)
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self):
        return _Names().eqn(self)


class NameStack:
    """The named scopes around an equation, printed as JAX's: "outer/inner"."""

    __slots__ = ("text",)

    def __init__(self, text: str = ""):
        self.text = text

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"NameStack({self.text!r})"


_NAMED = re.compile(r'^loc\("((?:[^"\\]|\\.)*)"\(')


class SourceInfo:
    """Where an equation was traced (JAX: source_info_util.SourceInfo): its named scopes
    (`name_stack`), read from the op's location when first asked."""

    __slots__ = ("_location", "_name_stack")
    traceback = None      # (mjax keeps the user's file:line:col in the location)

    def __init__(self, location):
        self._location, self._name_stack = location, None

    @property
    def name_stack(self) -> NameStack:
        if self._name_stack is None:
            m = _NAMED.match(str(self._location))
            self._name_stack = NameStack(m.group(1) if m else "")
        return self._name_stack


def new_jaxpr_eqn(invars, outvars, primitive, params, effects, source_info=None, ctx=None):
    return JaxprEqn(invars, outvars, primitive, params, effects, source_info, ctx)


class Jaxpr:
    """An open jaxpr: constvars and invars in, eqns, outvars out."""

    def __init__(self, constvars: Sequence[Var], invars: Sequence[Var], outvars: Sequence,
                 eqns: Sequence[JaxprEqn], effects=no_effects, debug_info=None,
                 is_high: bool = False):
        self.constvars, self.invars = list(constvars), list(invars)
        self.outvars, self.eqns = list(outvars), list(eqns)
        self.effects, self.debug_info, self.is_high = effects, debug_info, is_high
        self._text = None    # JAX's print of the traced function this was read from

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def replace(self, **changes) -> "Jaxpr":
        fields = dict(constvars=self.constvars, invars=self.invars, outvars=self.outvars,
                      eqns=self.eqns, effects=self.effects, debug_info=self.debug_info)
        fields.update(changes)
        return Jaxpr(**fields)

    def __str__(self):
        return self._text if self._text is not None else _Names().jaxpr(self, 0)

    __repr__ = __str__

    def pretty_print(self, **kwargs) -> str:
        return str(self)


class ClosedJaxpr:
    """A jaxpr with values for its constvars (JAX: core.ClosedJaxpr). `make_jaxpr`
    returns a subclass reading its trace (mjax/jit/stages.py)."""

    def __init__(self, jaxpr: Jaxpr, consts: Sequence):
        self._jaxpr, self.consts = jaxpr, list(consts)
        self.in_avals, self.out_avals = jaxpr.in_avals, jaxpr.out_avals

    @property
    def jaxpr(self) -> Jaxpr:
        return self._jaxpr

    @property
    def eqns(self):
        return self.jaxpr.eqns

    # (JAX's ClosedJaxpr forwards these to its jaxpr too)
    constvars = property(lambda self: self.jaxpr.constvars)
    invars = property(lambda self: self.jaxpr.invars)
    outvars = property(lambda self: self.jaxpr.outvars)
    debug_info = property(lambda self: getattr(self.jaxpr, "debug_info", None))
    is_high = False

    @property
    def literals(self):
        return self.consts

    @property
    def effects(self):
        return self.jaxpr.effects

    def map_jaxpr(self, f) -> "ClosedJaxpr":
        return ClosedJaxpr(f(self.jaxpr), self.consts)

    def replace(self, *, jaxpr=None, consts=None) -> "ClosedJaxpr":
        return ClosedJaxpr(self.jaxpr if jaxpr is None else jaxpr,
                           self.consts if consts is None else consts)

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **kwargs) -> str:
        return str(self)


# ---- reading a function of the dialect --------------------------------------------------
def read_function(block, n_consts: int = 0) -> Jaxpr:
    """The Jaxpr of a function's (or body's) entry block; its last `n_consts` arguments
    are the constvars."""
    return _Reader().block(block, n_consts)


def _literal(op) -> Literal:
    return Literal(decode(op.attributes["value"]), aval_of(op.results[0].type))


def _scalar_literal(v):
    """An elementwise equation's operand: a splat constant (where mjax folded a Python
    scalar's broadcast) is the scalar literal JAX's jaxpr has."""
    if isinstance(v, Literal) and v.aval.shape and not any(getattr(v.val, "strides", (1,))):
        return Literal(v.val.reshape(-1)[0], v.aval.update(shape=()))
    return v


class _Reader:
    def __init__(self):
        self.callees: dict = {}   # callee name -> its ClosedJaxpr (read once)

    def block(self, block, n_consts: int = 0) -> Jaxpr:
        env: dict = {}
        args = list(block.arguments)
        n_user = len(args) - n_consts
        for a in args:
            env[a] = Var(aval_of(a.type))
        eqns, outvars = [], []
        implicit: dict = {}     # an implicit broadcast's result Var -> its operand
        for op in block.operations:
            op = op.operation
            if op.name in ("func.return", "jaxpr.yield"):
                outvars = [env[v] for v in op.operands]
                break
            if op.name == "jaxpr.constant":
                env[op.results[0]] = _literal(op)
                continue
            outvars_ = [Var(aval_of(r.type)) for r in op.results]
            env.update(zip(op.results, outvars_))
            prim, params = self.equation(op)
            invars = [env[v] for v in op.operands]
            if "mjax.implicit_broadcast" in op.attributes:
                implicit[outvars_[0]] = invars[0]
            if getattr(prim, "elementwise", False):
                # JAX's elementwise primitives take a scalar operand, or one of the same
                # rank with size-1 dims, as it is (so do their binds: primitive.py)
                invars = [_scalar_literal(implicit.get(v, v)) for v in invars]
            eqns.append(JaxprEqn(invars, outvars_, prim, params,
                                 source_info=SourceInfo(op.location)))
        if implicit:   # (the implicit broadcasts that only elementwise equations read go)
            read = {v for e in eqns for v in e.invars} | set(outvars)
            eqns = [e for e in eqns if not (e.outvars[0] in implicit
                                             and e.outvars[0] not in read)]
        return Jaxpr([env[a] for a in args[n_user:]], [env[a] for a in args[:n_user]],
                     outvars, eqns)

    def closed(self, block) -> ClosedJaxpr:
        return ClosedJaxpr(self.block(block), [])

    def callee(self, op, attr: str = "callee") -> ClosedJaxpr | None:
        name = op.attributes[attr] if attr in op.attributes else None
        if name is None:
            return None
        key = str(decode(name))
        if key not in self.callees:
            block, _ = callee_block(op, attr)
            self.callees[key] = None if block is None else self.closed(block)
        return self.callees[key]

    def equation(self, op):
        """(primitive, params) of one op."""
        cls = OPS[op.name]
        attrs = {n: decode(op.attributes[n]) for n in op.attributes
                 if not n.startswith("mjax.")}   # (mjax's notes, not parameters)
        if "precision" in attrs:      # (JAX's Precision pair or dot algorithm)
            attrs["precision"] = precision_from_attr(attrs["precision"])
        if cls is ExpandDimsOp:     # (JAX has no expand_dims primitive: a broadcast_in_dim)
            shape = aval_of(op.results[0].type).shape
            new = set(attrs["dimensions"])
            return primitive_of(BroadcastInDimOp), {
                "shape": shape,
                "broadcast_dimensions": tuple(d for d in range(len(shape)) if d not in new),
                "sharding": None}
        if cls is UserPrimitiveOp:
            source = custom_rules.source_of(attrs["rule"]) if attrs.get("rule") else None
            if source is not None:
                return source.prim, dict(source.params)
        bodies = [self.closed(r.blocks[0]) for r in op.regions]
        if cls is C.CondOp:
            attrs["branches"] = tuple(bodies)
        elif cls is C.WhileOp:
            attrs.update(cond_jaxpr=bodies[0], body_jaxpr=bodies[1])
        elif cls in (C.ScanOp, ReduceOp, ReduceWindowOp):
            attrs["jaxpr"] = bodies[0]   # (JAX 0.10.2's scan has no linear/_split_transpose)
        elif cls in (T.CallOp, T.CheckpointOp):
            attrs["jaxpr"] = self.callee(op)
            attrs["name"] = user_name(str(attrs.pop("callee")).lstrip("@"))
        elif cls is T.CustomJvpCallOp:
            attrs["call_jaxpr"] = self.callee(op)
            attrs["jvp_jaxpr"] = self.callee(op, "jvp")
            attrs["symbolic_zeros"] = False
        elif cls is T.CustomVjpCallOp:
            attrs["call_jaxpr"] = self.callee(op)
        elif cls is ShardMapOp:     # (JAX's shard_map: its body, an open jaxpr)
            attrs["jaxpr"] = getattr(self.callee(op), "jaxpr", None)
        elif cls is ConvertElementTypeOp:   # (mjax marks a weakly typed result)
            attrs["weak_type"] = "mjax.weak_type" in op.attributes
        prim = primitive_of(cls)
        return prim, as_jax_params(prim.name, attrs, [aval_of(r.type) for r in op.results])


# ---- evaluating ----------------------------------------------------------------------
@EVAL_JAXPR.fill
def eval_jaxpr(jaxpr: Jaxpr, consts, *args, propagate_source_info=True) -> list:
    """Evaluates `jaxpr` on `consts` and `args` by binding each equation's primitive: run
    eagerly with concrete arguments, staged into the current trace under one."""
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.constvars)} constants and "
                        f"{len(jaxpr.invars)} arguments, got {len(consts)} and {len(args)}")
    if current_trace() is None and _has_keys(jaxpr):
        # (an op on typed keys has no eager form of its own: key arrays are wrappers of
        # their data until a trace, so such a jaxpr runs as one program)
        return JIT(lambda c, a: eval_equations(jaxpr, c, a))(list(consts), list(args))
    return eval_equations(jaxpr, consts, args)


def _has_keys(jaxpr: Jaxpr) -> bool:
    return any(isinstance(getattr(getattr(v, "aval", None), "dtype", None), KeyType)
               for eqn in jaxpr.eqns for v in (*eqn.invars, *eqn.outvars))


def _bind(eqn, vals):
    return eqn.primitive.bind(*vals, **eqn.params)


def eval_equations(jaxpr: Jaxpr, consts, args, apply=_bind) -> list:
    """Runs `jaxpr`'s equations in order, each as `apply(eqn, input values)` (by default
    its primitive's bind; sparsify passes a rule that handles sparse inputs)."""
    env: dict = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        outs = apply(eqn, [read(v) for v in eqn.invars])
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        for v, x in zip(eqn.outvars, outs):
            if not isinstance(v, DropVar):
                env[v] = x
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr, *args):
    """`closed_jaxpr` as a function of its arguments, returning the list of its results
    (JAX: core.jaxpr_as_fun); with args, that function's value on them."""
    def fun(*a):
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *a)
    return fun(*args) if args else fun


def _bind_cond(index, *ops, branches, **_):
    return lax.switch(index, [jaxpr_as_fun(b) for b in branches], *ops)


def _bind_while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, **_):
    cc, bc = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    init = list(args[cond_nconsts + body_nconsts:])
    return lax.while_loop(lambda c: jaxpr_as_fun(cond_jaxpr)(*cc, *c)[0],
                          lambda c: jaxpr_as_fun(body_jaxpr)(*bc, *c), init)


def _bind_scan(*args, jaxpr, length, reverse=False, unroll=1, num_consts, num_carry, **_):
    consts, carry = args[:num_consts], list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])

    def step(c, x):
        out = jaxpr_as_fun(jaxpr)(*consts, *c, *x)
        return out[:num_carry], out[num_carry:]
    carry, ys = lax.scan(step, carry, xs, length=length, reverse=reverse, unroll=unroll)
    return list(carry) + list(ys)


def _bind_reduce(*args, jaxpr, dimensions, **_):
    n = len(args) // 2
    body = jaxpr_as_fun(jaxpr)
    if n == 1:
        return [lax.reduce(args[0], args[1], lambda a, b: body(a, b)[0], dimensions)]
    return list(lax.reduce(tuple(args[:n]), tuple(args[n:]),
                           lambda a, b: tuple(body(*a, *b)), dimensions))


def _bind_reduce_window(*args, jaxpr, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation, **_):
    n = len(args) // 2
    body = jaxpr_as_fun(jaxpr)
    window = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    if n == 1:
        return [lax.reduce_window(args[0], args[1], lambda a, b: body(a, b)[0], *window)]
    return list(lax.reduce_window(tuple(args[:n]), tuple(args[n:]),
                                  lambda a, b: tuple(body(*a, *b)), *window))


def _bind_call(*args, jaxpr, **_):
    return jaxpr_as_fun(jaxpr)(*args)


def _bind_convert(x, *, new_dtype, weak_type=False, sharding=None):
    if sharding is not None:
        raise NotImplementedError("binding convert_element_type with a sharding: mjax's "
                                  "cast takes none (apply jax.sharding.reshard after it)")
    return lax.convert_element_type(x, new_dtype, weak_type=weak_type)


REGION_BINDS.update({
    C.CondOp: _bind_cond, C.WhileOp: _bind_while, C.ScanOp: _bind_scan,
    ReduceOp: _bind_reduce, ReduceWindowOp: _bind_reduce_window,
    T.CallOp: _bind_call, T.CheckpointOp: _bind_call,
    ConvertElementTypeOp: _bind_convert,     # (JAX's weak_type parameter)
    # (custom_jvp_call, custom_vjp_call: mjax.ad.custom, which keeps the user's rules)
})


# ---- printing a jaxpr made or changed in Python ---------------------------------------
class _Names:
    """JAX's compact form of a Jaxpr object (one made from a trace prints as JAX's)."""

    def __init__(self):
        self.names: dict = {}

    def var(self, v) -> str:
        if isinstance(v, Literal):
            return f"{v.val}:{v.aval.str_short()}"
        if isinstance(v, DropVar):
            return "_"
        if v not in self.names:
            n, name = len(self.names), ""
            while not name or n:
                n, digit = divmod(n, 26)
                name = chr(ord("a") + digit) + name
            self.names[v] = name
        return self.names[v]

    def typed(self, v) -> str:
        return f"{self.var(v)}:{v.aval.str_short()}"

    def eqn(self, eqn: JaxprEqn, indent: int = 4) -> str:
        shown = []
        for k, v in sorted(eqn.params.items()):
            if isinstance(v, ClosedJaxpr):
                v = self.jaxpr(v.jaxpr, indent + 2)
            elif isinstance(v, tuple) and v and all(isinstance(b, ClosedJaxpr) for b in v):
                v = "(" + ", ".join(self.jaxpr(b.jaxpr, indent + 2) for b in v) + ")"
            elif isinstance(v, Symbol):
                v = str(v)
            shown.append(f"{k}={v}")
        params = f"[{' '.join(shown)}]" if shown else ""
        outs = " ".join(self.typed(v) for v in eqn.outvars)
        ins = " ".join(self.var(v) for v in eqn.invars)
        return f"{outs} = {eqn.primitive.name}{params} {ins}".rstrip()

    def jaxpr(self, jaxpr: Jaxpr, indent: int) -> str:
        consts = " ".join(self.typed(v) for v in jaxpr.constvars)
        ins = " ".join(self.typed(v) for v in jaxpr.invars)
        pad = " " * (indent + 4)
        eqns = "".join(f"\n{pad}{self.eqn(e, indent + 4)}" for e in jaxpr.eqns)
        outs = ", ".join(self.var(v) for v in jaxpr.outvars)
        comma = "," if len(jaxpr.outvars) == 1 else ""
        return f"{{ lambda {consts}; {ins}. let{eqns}\n{' ' * (indent + 2)}in ({outs}{comma}) }}"


def jaxprs_in_params(params) -> list:
    """The Jaxprs among an equation's parameters (JAX: core.jaxprs_in_params)."""
    out = []
    for v in params.values():
        for x in (v if isinstance(v, (tuple, list)) else [v]):
            if isinstance(x, ClosedJaxpr):
                out.append(x.jaxpr)
            elif isinstance(x, Jaxpr):
                out.append(x)
    return out


def subjaxprs(jaxpr: Jaxpr):
    """The Jaxprs in the parameters of `jaxpr`'s equations (JAX: core.subjaxprs)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def gensym():
    """A function making fresh Vars of a given aval (JAX: core.gensym)."""
    return Var

