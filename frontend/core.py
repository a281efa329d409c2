"""The tracing core: abstract values, tracers, traces and `bind`.

`bind(op, *args, **params)` is the one door from Python into IR. Under a trace it emits
`jaxpr.<op>` into the function being built and returns tracers; with no trace active it
runs the op eagerly (see eager.py). Every op carries the user's `file:line:col`.
"""
from __future__ import annotations

import contextlib
import operator
import os
import sys
import threading
import typing

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from mjax import dtypes
from mjax.array_methods import ArrayMethods
from mjax.dialect import ShapedArray, context, tensor_type
from mjax.dialect.core import InferError, JaxprOp
from mjax.eager import apply_eager
from mjax.array import Array  # (after mjax.eager, which needs it first)
from mjax.errors import (ConcretizationTypeError, TracerArrayConversionError,
                         TracerBoolConversionError, TracerIntegerConversionError,
                         UnexpectedTracerError)

# ---- user source locations -------------------------------------------------------
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_LOC_CACHE: dict = {}
FUNCTION_AT: dict = {}   # (file, line, col) of a user location -> its function's qualname


def user_frame():
    """The innermost Python frame outside the mjax package (the user's line)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    return f


class _NameStack(threading.local):
    def __init__(self):
        self.names: tuple[str, ...] = ()


_names = _NameStack()


@contextlib.contextmanager
def named_scope(name: str):
    """Ops traced inside get `name` in their location (`outer/inner`), which StableHLO
    and XLA keep as the op name that profiles and HLO dumps show. JAX: jax.named_scope."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    previous = _names.names
    _names.names = previous + (name,)
    try:
        yield
    finally:
        _names.names = previous


def user_location() -> ir.Location:
    f = user_frame()
    if f is None:
        return ir.Location.unknown(context())
    scope = _names.names
    key = (f.f_code, f.f_lasti, scope)
    loc = _LOC_CACHE.get(key)
    if loc is None:
        line, col = f.f_lineno, 1
        try:
            pos = list(f.f_code.co_positions())[f.f_lasti // 2]
            if pos[0] is not None:
                line, col = pos[0], (pos[2] or 0) + 1
        except (IndexError, AttributeError):
            pass
        loc = ir.Location.file(f.f_code.co_filename, line, col, context())
        # The Python function of each position (JAX's print_saved_residuals shows it).
        FUNCTION_AT[(f.f_code.co_filename, line, col)] = getattr(
            f.f_code, "co_qualname", f.f_code.co_name)
        if scope:
            loc = ir.Location.name("/".join(scope), childLoc=loc, context=context())
        _LOC_CACHE[key] = loc
    return loc


def describe_location(loc: ir.Location) -> str:
    from mjax.passes.registry import format_location
    return format_location(loc)


def at_user_line(message: str) -> str:
    """`message` plus the user's `file:line:col`, for errors raised in mjax's own code."""
    return f"{message} (at {describe_location(user_location())})"


# ---- trace state -----------------------------------------------------------------
class _TraceState(threading.local):
    def __init__(self):
        self.stack: list[Trace] = []


_state = _TraceState()


def current_trace() -> "Trace | None":
    stack = _state.stack
    return stack[-1] if stack else None


class Trace:
    """One Python function being traced into a `func.func` of a module.

    Arguments are block arguments; values captured from outside (concrete arrays too big
    to inline, tracers of an enclosing trace) become extra arguments listed in
    `captured`, which the caller supplies.
    """

    # Scalars (and NumPy splat views) become jaxpr.constant ops; other arrays are captured,
    # as JAX makes them constvars.

    # Traced values' Explicit shardings, when the function got arrays of such types, and
    # in a shard_map body the mesh axes each value varies along (mjax.sharding_types;
    # None: none, so bind skips them).
    type_specs = None
    varying = None

    def __init__(self, module: ir.Module, name: str, in_avals, *, visibility=None):
        self.module = module
        self.name = name
        self.in_avals = list(in_avals)
        self.captured: list = []          # outer values (Arrays, ndarrays or Tracers)
        self._captured_ids: dict = {}
        self.active = True
        ctx = context()
        with ctx, ir.Location.unknown(ctx):
            with ir.InsertionPoint(module.body):
                self.func = func.FuncOp(name, ([tensor_type(a) for a in self.in_avals], []))
                if visibility:
                    self.func.attributes["sym_visibility"] = ir.StringAttr.get(visibility)
            self.block = self.func.add_entry_block()
        self.ip = ir.InsertionPoint(self.block)
        self.args = [Tracer(self, v, a) for v, a in zip(self.block.arguments, self.in_avals)]
        self.capture_avals: list[ShapedArray] = []

    # -- entering and leaving -----------------------------------------------------------
    def __enter__(self):
        _state.stack.append(self)
        return self

    def __exit__(self, *exc):
        popped = _state.stack.pop()
        assert popped is self, "trace stack corrupted"
        self.active = False

    # -- values ------------------------------------------------------------------------
    def _new_arg(self, aval: ShapedArray) -> Tracer:
        value = self.block.add_argument(tensor_type(aval), ir.Location.unknown(context()))
        return Tracer(self, value, aval)

    def capture(self, outer) -> "Tracer":
        """A tracer standing for `outer` (a concrete array or an enclosing trace's tracer)."""
        key = id(outer)
        hit = self._captured_ids.get(key)
        if hit is not None:
            return hit[1]
        aval = aval_of_value(outer)
        t = self._new_arg(aval)
        self._captured_ids[key] = (outer, t)  # keeps `outer` alive, so ids stay unique
        self.captured.append(outer)
        self.capture_avals.append(aval)
        return t

    def to_tracer(self, x) -> "Tracer":
        if isinstance(x, Tracer):
            if x.trace is self:
                return x
            if not x.trace.active:
                raise UnexpectedTracerError(escaped_tracer_message(x))
            return self.capture(x)
        aval = aval_of_value(x)
        if (aval.ndim == 0 or is_splat_view(x)) and not isinstance(
                aval.dtype, dtypes.KeyType):
            arr = np.asarray(to_numpy(x), dtype=aval.dtype) if not is_splat_view(x) else \
                np.asarray(x)   # (a plain ndarray: a literal's subclass indexes as mjax's)
            with ir.Location.unknown(context()):
                op = _ops().ConstantOp
                res = op.create([], [aval.strip_weak_type()], {"value": arr},
                                loc=user_location(), ip=self.ip).results[0]
                if aval.weak_type:   # (the jaxpr printer shows weak literals as JAX does)
                    res.owner.operation.attributes["mjax.weak_type"] = ir.UnitAttr.get()
            return Tracer(self, res, aval)
        return self.capture(x)

    def emit(self, opcls, tracers, params, out_avals) -> list["Tracer"]:
        loc = user_location()
        op = opcls.create([t.value for t in tracers], out_avals, params, loc=loc, ip=self.ip)
        return [Tracer(self, r, a, loc) for r, a in zip(op.results, out_avals)]

    def finish(self, outs) -> list[ShapedArray]:
        """Returns `outs` (tracers or constants) from the function; gives result avals."""
        outs = [self.to_tracer(o) for o in outs]
        with context(), ir.Location.unknown(context()):
            func.ReturnOp([o.value for o in outs], ip=self.ip)
            arg_types = [a.type for a in self.block.arguments]
            self.func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(arg_types, [o.value.type for o in outs]))
        return [o.aval for o in outs]


class RegionTrace(Trace):
    """One body (cond branch, loop body) being traced into a block, inside the trace that
    is current when it starts (its parent).

    The block is built inside a placeholder op in the parent's block and moved into the
    region op afterwards (`block_with`, `emit_region_op`).
    Regions are isolated from above: tracers of enclosing traces and concrete arrays too
    big to inline become extra block arguments, listed in `captured`, which the caller
    passes as explicit operands of the region op. Small constants are inlined.
    """

    def __init__(self, parent: Trace, in_avals):
        self.parent = parent
        self.module = parent.module
        self.name = parent.name
        self.in_avals = [a.strip_weak_type() for a in in_avals]
        self.captured = []
        self._captured_ids = {}
        self.capture_avals = []
        self.active = True
        ctx = context()
        with ctx, ir.Location.unknown(ctx):
            # A placeholder in the parent's block (so ops in the body can find the module,
            # e.g. a nested jit's callee); the body block moves into the region op once
            # every branch/body is traced, and the placeholder is erased.
            self._holder = ir.Operation.create("mjax.region_holder", regions=1,
                                               ip=parent.ip)
            self.block = ir.Block.create_at_start(
                self._holder.regions[0], [tensor_type(a) for a in self.in_avals])
        self.ip = ir.InsertionPoint(self.block)
        self.args = [Tracer(self, v, a) for v, a in zip(self.block.arguments, in_avals)]

    def finish(self, outs) -> list[ShapedArray]:
        """Ends the body with `jaxpr.yield outs`; gives the outputs' avals (weak types
        kept)."""
        outs = [self.to_tracer(o) for o in outs]
        with context(), ir.Location.unknown(context()):
            ir.Operation.create("jaxpr.yield", operands=[o.value for o in outs], ip=self.ip)
        return [o.aval for o in outs]

    def discard(self) -> None:
        """Erases the placeholder (and what is left in it): after the body block moved
        into its region op, or when staging the op failed."""
        if self._holder is not None:
            self._holder.erase()
            self._holder = None

    def block_with(self, outer_values) -> ir.Block:
        """The body as a block taking (*outer_values, *own arguments): every captured
        value must be among `outer_values` (by identity); the others are unused."""
        pos = {}
        for i, v in enumerate(outer_values):
            pos.setdefault(id(v), i)
        types = [tensor_type(aval_of_value(v).strip_weak_type()) for v in outer_values]
        with context(), ir.Location.unknown(context()):
            new = ir.Block.create_at_start(self._holder.regions[0],
                                           types + [tensor_type(a) for a in self.in_avals])
        n_own = len(self.in_avals)
        old = list(self.block.arguments)
        for i in range(n_own):
            old[i].replace_all_uses_with(new.arguments[len(outer_values) + i])
        for j, v in enumerate(self.captured):
            old[n_own + j].replace_all_uses_with(new.arguments[pos[id(v)]])
        for op in list(self.block.operations):
            new.append(op)
        return new


def trace_region(fun, in_avals, args_tree=None):
    """Traces fun(*args) as a body region of the current trace.

    `in_avals` are the flat argument avals (weak types kept); with `args_tree`, fun gets
    the unflattened pytree as its positional arguments. Returns (region trace, flat
    outputs' avals, output treedef)."""
    from mjax import tree_util
    parent = current_trace()
    body = RegionTrace(parent, in_avals)
    try:
        with body:
            args = body.args if args_tree is None else tree_util.tree_unflatten(args_tree,
                                                                                 body.args)
            out = fun(*args)
            leaves, out_tree = tree_util.tree_flatten(out)
            out_avals = body.finish(leaves)
    except BaseException:
        body.discard()
        raise
    return body, out_avals, out_tree


@contextlib.contextmanager
def discarding_on_error(bodies):
    """Erases the placeholders of traced bodies (a list filled inside the block) if
    staging their op fails, so a caught error leaves no stray op behind."""
    try:
        yield bodies
    except BaseException:
        for body in bodies:
            body.discard()
        raise


def emit_region_op(opcls, operands, params, bodies, outer, out_avals) -> list["Tracer"]:
    """Emits a region op (cond/while/scan) into the current trace; region i is bodies[i]
    taking (*outer[i], *its own arguments); `out_avals` (weak types kept) become the
    results' avals."""
    trace = current_trace()
    tracers = [trace.to_tracer(v) for v in operands]
    blocks = [b.block_with(o) for b, o in zip(bodies, outer)]
    op = opcls.build([t.value for t in tracers], [a.strip_weak_type() for a in out_avals],
                     params, blocks, loc=user_location(), ip=trace.ip)
    for body in bodies:
        body.discard()
    loc = user_location()
    return [Tracer(trace, r, a, loc) for r, a in zip(op.results, out_avals)]


def _ops():
    from mjax.dialect.ops import structural
    return structural


def escaped_tracer_message(t) -> str:
    # Only the recorded location: the IR behind `t.value` may already be lowered or freed.
    loc = getattr(t, "loc", None)
    where = f"at {describe_location(loc)}" if loc is not None else "as a function argument"
    return (f"Encountered an unexpected tracer: {t}. A function transformed by mjax "
            f"(jit, grad, vmap, ...) saved one of its intermediate traced values outside "
            f"(for example in a global or a list), and it was used after that "
            f"transformation finished. The tracer was created {where}. Return values "
            f"from the transformed function instead of leaking them.")


# ---- tracers ---------------------------------------------------------------------
# How a tracer prints, when something other than JitTracer(...) should (mjax.shard_map).
TRACER_REPR_HOOK = threading.local()


class Tracer(ArrayMethods):
    """A traced array: an `ir.Value` in the function being built, and its aval."""

    __slots__ = ("trace", "value", "aval", "loc")
    __array_priority__ = 1000

    def __init__(self, trace: Trace, value: ir.Value, aval: ShapedArray,
                 loc: ir.Location | None = None):
        self.trace = trace
        self.value = value
        self.aval = aval
        self.loc = loc  # the user's line that made it (None for arguments)

    def __repr__(self):
        hook = getattr(TRACER_REPR_HOOK, "fn", None)
        if hook is not None and (shown := hook(self)) is not None:
            return shown    # (a shard_map body run outside jit: its blocks, after the run)
        # JAX's form for a traced value under jit: JitTracer(~float32[3]) (~: weak type).
        a = self.aval
        shape = ",".join(map(str, a.shape))
        return f"JitTracer({'~' if a.weak_type else ''}{a.dtype.name}[{shape}])"

    # Inside grad & co. called outside jit, JAX knows the values (mjax.ad.concrete finds
    # them): bool/int/index/item always; float/complex/tolist/__array__ only for values
    # that do not depend on a differentiated input (JAX's JVP tracers refuse those).
    def __bool__(self):
        if (v := known_value(self)) is not None:
            return bool(v)
        raise TracerBoolConversionError(self, at_user_line(
            "The truth value of a traced array was requested (if/while/and/or on it)"))

    def __int__(self):    # (JAX: a ConcretizationTypeError for int(), as for float())
        if (v := known_value(self)) is not None:
            return int(v)
        raise ConcretizationTypeError(self, at_user_line("int() was called on a traced array"))

    def __index__(self):
        if (v := known_value(self)) is not None:
            return operator.index(v)
        raise TracerIntegerConversionError(self, at_user_line("used as an index"))

    def __float__(self):
        if (v := known_value(self, False)) is not None:
            return float(v)
        raise ConcretizationTypeError(self, at_user_line("float() was called on a traced array"))

    def __complex__(self):
        if (v := known_value(self, False)) is not None:
            return complex(v)
        raise ConcretizationTypeError(self, at_user_line("complex() was called on a traced "
                                                          "array"))

    def __array__(self, *args, **kwargs):
        if (v := known_value(self, False)) is not None:
            return v.__array__(*args, **kwargs)
        raise TracerArrayConversionError(self)

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__} ({self})")

    def item(self, *args):
        if (v := known_value(self)) is not None:
            return v.item(*args)
        raise ConcretizationTypeError(self, at_user_line(".item() was called on a traced array"))

    def tolist(self):
        if (v := known_value(self, False)) is not None:
            return v.tolist()
        raise ConcretizationTypeError(self, at_user_line(".tolist() was called on a traced "
                                                          "array"))


# Set by mjax.ad.concrete: (tracer, differentiated_ok) -> the concrete value JAX would
# know for it (inside grad & co. called outside jit), or None.
concrete_value_hook = None


def known_value(t: Tracer, differentiated_ok: bool = True):
    """The concrete value (an Array) JAX would know for tracer `t`, or None: inside
    grad & co. called outside jit (not under jit/vmap). With differentiated_ok=False,
    None for values that depend on a differentiated input (JAX's JVP tracers)."""
    hook = concrete_value_hook
    return None if hook is None else hook(t, differentiated_ok)


# ---- values ----------------------------------------------------------------------
def is_array_like(x) -> bool:
    from mjax.array import Array
    return isinstance(x, (Tracer, Array, np.ndarray, np.generic, bool, int, float, complex))


def aval_of_value(x) -> ShapedArray:
    """The aval (with weak_type) mjax gives a Python/NumPy/mjax value."""
    if type(x) is Tracer:       # the common case while tracing
        return x.aval
    cls = type(x)
    if cls is float or cls is int:
        return _scalar_aval(x)
    aval = getattr(x, "aval", None)
    if aval is not None and isinstance(aval, ShapedArray):
        return aval
    if isinstance(x, (bool, int, float, complex)):
        return _scalar_aval(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), dtypes.canonicalize_dtype(x.dtype))
    if hasattr(x, "__jax_array__"):
        return aval_of_value(x.__jax_array__())
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid mjax type "
                    f"(expected an array, a NumPy array or a Python scalar)")


def _scalar_aval(x) -> ShapedArray:
    """The weakly typed aval of a Python scalar (bool: strongly typed)."""
    if isinstance(x, int) and not isinstance(x, bool):
        info = np.iinfo(dtypes.default_int())
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to "
                                f"{dtypes.default_int()}")
    return ShapedArray((), dtypes.python_scalar_dtype(x), weak_type=not isinstance(x, bool))


def is_splat_view(x) -> bool:
    """A NumPy array broadcast from one value (all strides 0): inlined as a splat constant
    whatever its size, since its attribute holds one element."""
    return isinstance(x, np.ndarray) and x.size > 1 and not any(x.strides)


def to_numpy(x) -> np.ndarray:
    """Concrete value -> NumPy array in its canonical dtype."""
    from mjax.array import Array
    if isinstance(x, Array):
        return np.asarray(x)
    aval = aval_of_value(x)
    return np.asarray(x, dtype=aval.dtype)


# ---- bind ------------------------------------------------------------------------
# JAX's weak_type rules where they differ from its standard one (results weak when every
# input is, whatever the result dtype: `~f32 < ~f32` is `~bool`): the inputs that count
# (select_n: the cases; dynamic_slice, gather, scatter*: the operand), or never weak.
_WEAK_INPUTS = {"jaxpr.select_n": slice(1, None), "jaxpr.dynamic_slice": slice(0, 1),
                "jaxpr.gather": slice(0, 1), "jaxpr.scatter": slice(0, 1),
                "jaxpr.scatter_add": slice(0, 1), "jaxpr.scatter_sub": slice(0, 1),
                "jaxpr.scatter_mul": slice(0, 1), "jaxpr.scatter_min": slice(0, 1),
                "jaxpr.scatter_max": slice(0, 1)}
_NEVER_WEAK = {"jaxpr.bitcast_convert_type", "jaxpr.argmin", "jaxpr.argmax",
               "jaxpr.reduce_or", "jaxpr.reduce_and", "jaxpr.reduce_xor"}


def _result_weak(avals_in, avals_out, name=None) -> list[bool]:
    if name in _WEAK_INPUTS:
        avals_in = avals_in[_WEAK_INPUTS[name]]
    if not avals_in or name in _NEVER_WEAK or not all(a.weak_type for a in avals_in):
        return [False] * len(avals_out)
    return [True] * len(avals_out)


def infer_avals(opcls, avals, params, weak=None):
    """(checked params, result avals with weak types) for binding `opcls`; TypeError with
    the user's line on bad operands."""
    try:
        params = opcls.check_params(params)
        out_avals = opcls.infer_checked([a.strip_weak_type() for a in avals], params,
                                        params_checked=True)
    except InferError as e:
        loc = describe_location(user_location())
        raise TypeError(f"{e} (in {opcls.OPERATION_NAME} at {loc})") from None
    weaks = [weak] * len(out_avals) if weak is not None else _result_weak(
        avals, out_avals, opcls.OPERATION_NAME)
    # (A new aval only where the weak type changes: most results keep the inferred one.)
    return params, [a if a.weak_type == w else a.update(weak_type=w)
                    for a, w in zip(out_avals, weaks)]


_CARRY_AVAL = (Array, Tracer)   # types whose `aval` is always a ShapedArray


def bind(opcls: type[JaxprOp], *args, **params):
    """Applies `jaxpr.<op>` to args: staged under a trace, executed eagerly otherwise.

    Returns one value for single-result ops, else a list.
    """
    weak = params.pop("_weak_type", None) if params else None
    stack = _state.stack   # (current_trace(), inlined: this runs per op)
    trace = stack[-1] if stack else None
    # (Arrays and tracers carry their aval: read it directly.)
    if len(args) == 1:
        a = args[0]
        avals = [a.aval if type(a) in _CARRY_AVAL else aval_of_value(a)]
    else:
        avals = [a.aval if type(a) in _CARRY_AVAL else aval_of_value(a) for a in args]
    if trace is None:
        outs = apply_eager(opcls, args, avals, params, weak)
    else:
        params, out_avals = infer_avals(opcls, avals, params, weak)
        tracers = [trace.to_tracer(a) for a in args]
        outs = trace.emit(opcls, tracers, params, [a.strip_weak_type() for a in out_avals])
        for t, a in zip(outs, out_avals):
            t.aval = a
        if trace.type_specs is not None or trace.varying is not None:
            from mjax.sharding_types import trace_op_types
            trace_op_types(trace, opcls, tracers, outs, params)
    return outs[0] if len(outs) == 1 else outs


# ---- jax.core's names for annotations in libraries (issue 21) ----------------------
AbstractValue = ShapedArray  # JAX: the base class of avals; mjax's avals are ShapedArrays
Value = object               # JAX: a concrete value or a tracer
Atom = typing.Union[ir.BlockArgument, ir.OpResult]  # JAX: Union[Var, Literal]; mjax: an MLIR value
ParamDict = dict             # JAX: an equation's parameters by name
