"""Transformation ops: ops that name a `func.func` by symbol, Enzyme-style.

    %y = "jaxpr.call"(%x) {callee = @f}
    %y, %ty = "jaxpr.jvp"(%x, %tx) {callee = @f}            // primals, tangents
    %ct_x = "jaxpr.vjp"(%x, %ct_y) {callee = @f}            // primals, output cotangents
    %y = "jaxpr.custom_jvp_call"(%x) {callee = @f, jvp = @g}
    %y = "jaxpr.custom_vjp_call"(%x) {callee = @f, fwd = @a, bwd = @b}
    %y = "jaxpr.checkpoint"(%x) {callee = @f}
    %ys = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>,
                             axis_size = 8}              // batched over axis 0

Their result types depend on the callee, not only on the operands, so `infer` cannot be
called with operand avals alone. Each op instead has `infer_with_callees(avals, params,
signature)`, where `signature(name) -> (input avals, output avals)` reads a function's
type; `--jaxpr-verify` calls it with the module's symbol table (checking that the callee
exists and that operand and result types match), and `emit_transform` builds the op from
Python the same way.

Non-differentiable values (JAX's float0 tangents). Only values with an inexact dtype
(float or complex) carry tangents or cotangents. `jaxpr.jvp` and `jaxpr.vjp` take two
optional attributes:

- `diff_args`: indices of the callee arguments that are differentiated. Default: every
  argument with an inexact dtype. Listing an integer/bool argument is an error.
- `diff_results`: indices of the callee results that are differentiated. Default: every
  result with an inexact dtype.

`jaxpr.jvp @f(primals..., tangents of diff_args...) -> (outs..., tangents of diff_results...)`
and `jaxpr.vjp @f(primals..., cotangents of diff_results...) -> (cotangents of diff_args...)`.
Arguments outside `diff_args` have a symbolic zero tangent (no IR at all), and results
outside `diff_results` get no tangent (jvp) or a zero cotangent (vjp). So a frontend that
differentiates with respect to `argnums=0` only lists `diff_args = array<i64: 0>`, and the
other arguments cost nothing.

Custom rules use the same convention with the defaults (all inexact values):
`@g` of `custom_jvp_call` maps (primals..., tangents of inexact args...) to
(outs..., tangents of inexact outs...); `@a` of `custom_vjp_call` maps primals to
(outs..., residuals...), and `@b` maps (residuals..., cotangents of inexact outs...) to
cotangents of inexact args.

A rule is named either as a function of the module (`jvp = @g`, `fwd = @a`, `bwd = @b`:
the form `mjax-opt` reads) or, when it has not been traced yet, by `rule = "<handle>"`:
a handle into the process's registry of the Python rules (passes/custom_rules.py), which
the passes trace on demand, as JAX traces rules only when differentiating. A
`custom_vjp_call` may name its fwd and leave bwd to the handle.

Two further ops are made only inside `--jaxpr-vjp` (linearization) and never survive it:
`jaxpr.checkpoint_tangent` and `jaxpr.custom_vjp_tangent`, the linear parts of
`checkpoint` and `custom_vjp_call` (JAX: the linearized remat call and `custom_lin_p`).
`jaxpr.custom_vjp_bwd` is what transposing a `custom_vjp_tangent` whose bwd is still a
handle leaves: the bwd call, traced when the function holding it is compiled (so that an
eager `vjp` traces bwd when its pullback is first called, as in JAX).
"""
from __future__ import annotations

from typing import Callable

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import InferError, JaxprOp
from mjax.dialect.dtype_rules import is_inexact
from mjax.dialect.types import RefAval, ShapedArray, aval_of, tensor_type

Signature = tuple[list[ShapedArray], list[ShapedArray]]
SignatureLookup = Callable[[str], Signature]


def differentiable(aval: ShapedArray) -> bool:
    """Whether values of this aval carry tangents (JAX: not float0). A ref carries none:
    what is read from it is a value without a tangent."""
    return is_inexact(aval.dtype) and not isinstance(aval, RefAval)


def default_diff(avals) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(avals) if differentiable(a))


def _check_diff(op: str, what: str, indices, avals) -> tuple[int, ...]:
    if indices is None:
        return default_diff(avals)
    indices = tuple(indices)
    if list(indices) != sorted(set(indices)):
        raise InferError(f"'{op}' op {what} {indices} must be strictly increasing")
    for i in indices:
        if not 0 <= i < len(avals):
            raise InferError(f"'{op}' op {what} index {i} is out of range for "
                             f"{len(avals)} values")
        if not differentiable(avals[i]):
            raise InferError(f"'{op}' op {what} lists index {i} of dtype "
                             f"{avals[i].str_short()}, which has no tangent (float0); only "
                             f"float and complex values are differentiated")
    return indices


def _fmt(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _expect(op: str, what: str, got, expected):
    if list(got) != list(expected):
        raise InferError(f"'{op}' op {what} {_fmt(got)} do not match the expected "
                         f"{_fmt(expected)}")


def _differentiated(cls, avals, params, signature, kind: str):
    """Callee signature and checked diff_args/diff_results of jvp-like ops, after checking
    the operands are (primals, tangents of diff_args) or (primals, cotangents of
    diff_results)."""
    ins, outs = signature(params["callee"])
    da = _check_diff(cls.OPERATION_NAME, "diff_args", params["diff_args"], ins)
    dr = _check_diff(cls.OPERATION_NAME, "diff_results", params["diff_results"], outs)
    extra = [ins[i] for i in da] if kind == "tangents" else [outs[j] for j in dr]
    _expect(cls.OPERATION_NAME, f"operand types (primals, {kind})", avals, list(ins) + extra)
    return ins, outs, da, dr


class TransformOp(JaxprOp):
    """Base of ops naming functions by symbol; result types come from the callees."""

    num_operands = None
    # Attributes holding the symbols this op references.
    callee_attributes: tuple[str, ...] = ("callee",)

    @classmethod
    def infer(cls, *avals, **params):
        raise InferError(f"'{cls.OPERATION_NAME}' op result types depend on the callee; "
                         f"use infer_with_callees (or emit_transform)")

    @classmethod
    def infer_with_callees(cls, avals, params, signature: SignatureLookup):
        """Result avals, given operand avals, params and a function signature lookup."""
        raise NotImplementedError

    @classmethod
    def infer_at(cls, op: ir.Operation, avals, params):
        """`infer_with_callees` with the signatures of the module that holds `op`."""
        return cls.infer_with_callees(avals, params, module_signatures(op))


class CallOp(TransformOp, name="call"):
    """Calls a function. JAX: pjit_p / core.call_p (a closed call)."""
    attributes = {"callee": A.Sym()}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        ins, outs = signature(params["callee"])
        _expect(cls.OPERATION_NAME, "operand types", avals, ins)
        return tuple(outs)


class CheckpointOp(CallOp, name="checkpoint"):
    """Calls a function whose forward is recomputed in the backward pass, not saved.
    JAX: checkpoint / remat_p."""
    attributes = {"callee": A.Sym(), "prevent_cse": A.Bool(default=True),
                  # what reverse mode may save (frontend/ad/checkpoint_policies.py);
                  # absent: nothing but the inputs
                  "policy": A.Str(default=None, choices=(
                      "nothing_saveable", "everything_saveable", "dots_saveable",
                      "dots_with_no_batch_dims_saveable", "save_only_these_names",
                      "save_any_names_but_these", "save_anything_except_these_names",
                      "dots_or_names", "callable")),
                  # the names of the name-based policies (jaxpr.checkpoint_name);
                  # for "callable", the key of the Python policy (passes/rules/remat.py)
                  "names": A.AnyAttr(default=None)}


class CheckpointNameOp(JaxprOp, name="checkpoint_name"):
    """Identity that names a value for rematerialization policies (save_only_these_names
    and the like). JAX: ad_checkpoint.name_p."""
    attributes = {"name": A.Str()}

    @classmethod
    def infer(cls, x, *, name):
        return (x,)


class XlaMetadataValueOp(JaxprOp, name="xla_metadata_value"):
    """Identity that tags the op defining its operand with XLA frontend attributes
    (`xla_metadata_kvs`: sorted (key, value) pairs; lowered as that StableHLO op's
    `mhlo.frontend_attributes`). JAX: xla_metadata.xla_metadata_value_p."""
    attributes = {"xla_metadata_kvs": A.AnyAttr()}

    @classmethod
    def infer(cls, x, *, xla_metadata_kvs):
        return (x,)


class JvpOp(TransformOp, name="jvp"):
    """Forward-mode derivative of a function: (primals, tangents) -> (outs, tangents).
    JAX: jax.jvp."""
    attributes = {"callee": A.Sym(), "diff_args": A.Ints(default=None),
                  "diff_results": A.Ints(default=None)}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        ins, outs, da, dr = _differentiated(cls, avals, params, signature, "tangents")
        return tuple(outs) + tuple(outs[j] for j in dr)


class VjpOp(TransformOp, name="vjp"):
    """Reverse-mode derivative: (primals, output cotangents) -> input cotangents.
    JAX: jax.vjp (forward and backward in one op)."""
    attributes = {"callee": A.Sym(), "diff_args": A.Ints(default=None),
                  "diff_results": A.Ints(default=None)}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        ins, outs, da, dr = _differentiated(cls, avals, params, signature, "cotangents")
        return tuple(ins[i] for i in da)


class LinearTransposeOp(TransformOp, name="linear_transpose"):
    """The transpose of `callee`, a function linear in its first `num_linear` arguments:
    (its other arguments..., cotangents of its results...) -> cotangents of the linear
    arguments. Each op is transposed by its own rule, as JAX's backward pass does (a
    custom_jvp function's primal, not its JVP rule). JAX: jax.linear_transpose."""
    attributes = {"callee": A.Sym(), "num_linear": A.Int()}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        ins, outs = signature(params["callee"])
        n = params["num_linear"]
        if not 0 <= n <= len(ins):
            raise InferError(f"'{cls.OPERATION_NAME}' op num_linear {n} is not between 0 "
                             f"and the callee's {len(ins)} arguments")
        _expect(cls.OPERATION_NAME, "operand types (other arguments, cotangents)", avals,
                list(ins[n:]) + list(outs))
        return tuple(ins[:n])


class CustomJvpCallOp(TransformOp, name="custom_jvp_call"):
    """Calls `callee`; its JVP is the function `jvp`, or the rule behind the handle `rule`
    (traced when a differentiation needs it). The last `num_consts` operands are values
    the function closes over: differentiating with respect to them is an error.
    JAX: custom_jvp_call_p."""
    attributes = {"callee": A.Sym(), "jvp": A.Sym(default=None), "rule": A.Str(default=None),
                  "num_consts": A.Int(default=None)}
    callee_attributes = ("callee", "jvp")

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        ins, outs = signature(params["callee"])
        _expect(cls.OPERATION_NAME, "operand types", avals, ins)
        _one_rule(cls.OPERATION_NAME, params, ("jvp",))
        if params["jvp"] is None:
            return tuple(outs)
        g_ins, g_outs = signature(params["jvp"])
        t_ins = [a for a in ins if differentiable(a)]
        t_outs = [a for a in outs if differentiable(a)]
        _expect(cls.OPERATION_NAME, f"jvp rule @{params['jvp']} argument types", g_ins,
                list(ins) + t_ins)
        _expect(cls.OPERATION_NAME, f"jvp rule @{params['jvp']} result types", g_outs,
                list(outs) + t_outs)
        return tuple(outs)


def _one_rule(name: str, params, symbols) -> None:
    """Every rule is named: by its symbol, or (for those that are not) by the handle."""
    if params["rule"] is None and any(params[s] is None for s in symbols):
        missing = [s for s in symbols if params[s] is None]
        raise InferError(f"'{name}' op needs {' and '.join(missing)} (a function of the "
                         f"module) or a `rule` handle")


class CustomVjpCallOp(TransformOp, name="custom_vjp_call"):
    """Calls `callee`; reverse mode uses `fwd` (primals -> outs, residuals) and `bwd`
    (residuals, cotangents -> input cotangents), or the rules behind the handle `rule`
    for those not given (fwd given, bwd from the handle: the residuals are fwd's). The
    last `num_consts` operands are values the function closes over, as for
    custom_jvp_call. JAX: custom_vjp_call_p."""
    attributes = {"callee": A.Sym(), "fwd": A.Sym(default=None), "bwd": A.Sym(default=None),
                  "rule": A.Str(default=None), "num_consts": A.Int(default=None)}
    callee_attributes = ("callee", "fwd", "bwd")

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        name = cls.OPERATION_NAME
        ins, outs = signature(params["callee"])
        _expect(name, "operand types", avals, ins)
        _one_rule(name, params, ("fwd", "bwd"))
        if params["bwd"] is not None and params["fwd"] is None:
            raise InferError(f"'{name}' op names bwd @{params['bwd']} without fwd (the "
                             f"residuals it takes are fwd's)")
        if params["fwd"] is None:
            return tuple(outs)
        a_ins, a_outs = signature(params["fwd"])
        _expect(name, f"fwd @{params['fwd']} argument types", a_ins, ins)
        _expect(name, f"fwd @{params['fwd']} leading result types", a_outs[:len(outs)], outs)
        if params["bwd"] is None:
            return tuple(outs)
        res = list(a_outs[len(outs):])
        b_ins, b_outs = signature(params["bwd"])
        _expect(name, f"bwd @{params['bwd']} argument types (residuals, cotangents)", b_ins,
                res + [a for a in outs if differentiable(a)])
        _expect(name, f"bwd @{params['bwd']} result types", b_outs,
                [a for a in ins if differentiable(a)])
        return tuple(outs)


NOT_MAPPED = -1  # in_axes/out_axes entry of jaxpr.vmap for "not mapped" (JAX's None)


def batched_aval(aval: ShapedArray, axis: int, size: int) -> ShapedArray:
    """`aval` with a batch axis of `size` inserted at `axis` (NOT_MAPPED: unchanged)."""
    if axis == NOT_MAPPED:
        return aval
    shape = aval.shape[:axis] + (size,) + aval.shape[axis:]
    return (RefAval if isinstance(aval, RefAval) else ShapedArray)(shape, aval.dtype)


class VmapOp(TransformOp, name="vmap"):
    """Vectorizing map of a function over one batch axis of size `axis_size`.

    Operand i is callee argument i with a batch axis inserted at `in_axes[i]`, result j
    is callee result j with one at `out_axes[j]`; -1 means "not mapped" (JAX's None).
    `axis_name` names the axis for collectives (`psum`, ...) inside the callee.
    `out_paths` (optional): each result's key path in the function's output, for errors.
    JAX: jax.vmap (batching.batch)."""
    attributes = {"callee": A.Sym(), "in_axes": A.Ints(), "out_axes": A.Ints(),
                  "axis_size": A.Dim(), "axis_name": A.Str(default=None),
                  "spmd_axis_name": A.Str(default=None), "out_paths": A.AnyAttr(default=None)}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        name = cls.OPERATION_NAME
        ins, outs = signature(params["callee"])
        size = params["axis_size"]
        if size < 0:
            raise InferError(f"'{name}' op axis_size must be non-negative, got {size}")
        for what, axes, vals in (("in_axes", params["in_axes"], ins),
                                 ("out_axes", params["out_axes"], outs)):
            if len(axes) != len(vals):
                raise InferError(f"'{name}' op {what} has {len(axes)} entries for "
                                 f"{len(vals)} callee {what[:-5]}puts")
            for k, (ax, a) in enumerate(zip(axes, vals)):
                if not (ax == NOT_MAPPED or 0 <= ax <= len(a.shape)):
                    raise InferError(f"'{name}' op {what}[{k}] = {ax} is out of range for "
                                     f"a batched value of rank {len(a.shape) + 1} (use -1 "
                                     f"for not mapped)")
        _expect(name, "operand types", avals,
                [batched_aval(a, ax, size) for a, ax in zip(ins, params["in_axes"])])
        return tuple(batched_aval(a, ax, size) for a, ax in zip(outs, params["out_axes"]))


class CheckpointTangentOp(TransformOp, name="checkpoint_tangent"):
    """Internal to --jaxpr-vjp: the tangent part of `checkpoint @f`, linear in the
    tangents. (primals, tangents of diff_args) -> tangents of diff_results. Its transpose
    is `jaxpr.vjp @f`, so f's forward is recomputed in the backward pass; with
    `prevent_cse` (the checkpoint's), on primals behind a `jaxpr.optimization_barrier`,
    so that CSE cannot merge the recomputation with the original forward."""
    attributes = {"callee": A.Sym(), "diff_args": A.Ints(default=None),
                  "diff_results": A.Ints(default=None),
                  "prevent_cse": A.Bool(default=True)}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        ins, outs, da, dr = _differentiated(cls, avals, params, signature, "tangents")
        return tuple(outs[j] for j in dr)


class CustomVjpTangentOp(TransformOp, name="custom_vjp_tangent"):
    """Internal to --jaxpr-vjp: the tangent part of `custom_vjp_call`, linear in the
    tangents: (residuals, tangents of inexact args) -> tangents of inexact outs. Its
    transpose calls `bwd`, or (with the `rule` handle instead) leaves a custom_vjp_bwd;
    `callee` (the custom function) then gives the types. It cannot be evaluated forward.
    JAX: custom_lin_p."""
    attributes = {"bwd": A.Sym(default=None), "rule": A.Str(default=None),
                  "callee": A.Sym(default=None), "num_residuals": A.Int()}
    callee_attributes = ("bwd", "callee")

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        n = params["num_residuals"]
        if params["bwd"] is not None:
            b_ins, b_outs = signature(params["bwd"])
            _expect(cls.OPERATION_NAME, "operand types (residuals, tangents)", avals,
                    list(b_ins[:n]) + list(b_outs))
            return tuple(b_ins[n:])
        if params["rule"] is None or params["callee"] is None:
            raise InferError(f"'{cls.OPERATION_NAME}' op needs bwd, or a `rule` handle and "
                             f"the callee")
        ins, outs = signature(params["callee"])
        _expect(cls.OPERATION_NAME, "operand types (residuals, tangents)", avals[n:],
                [a for a in ins if differentiable(a)])
        return tuple(a for a in outs if differentiable(a))


class CustomVjpBwdOp(TransformOp, name="custom_vjp_bwd"):
    """The bwd rule of the custom_vjp function `callee`, not traced yet: (residuals,
    cotangents of its inexact results) -> cotangents of its inexact arguments. `rule` is
    the handle of the Python rules (passes/custom_rules.py); --jaxpr-expand-transforms
    traces bwd when it compiles the function holding this op (or a transformation needs
    its body). Made by transposing a `custom_vjp_tangent` whose bwd is a handle.
    `zero_cotangents`: the cotangent operands that are zeros the transposition made (a
    bwd rule defined with symbolic_zeros=True gets SymbolicZero objects for them)."""
    attributes = {"callee": A.Sym(), "rule": A.Str(), "num_residuals": A.Int(),
                  "zero_cotangents": A.Ints(default=None)}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        ins, outs = signature(params["callee"])
        n = params["num_residuals"]
        _expect(cls.OPERATION_NAME, "cotangent operand types", avals[n:],
                [a for a in outs if differentiable(a)])
        return tuple(a for a in ins if differentiable(a))


TRANSFORM_OPS = (CallOp, CheckpointOp, JvpOp, VjpOp, LinearTransposeOp, VmapOp,
                 CustomJvpCallOp, CustomVjpCallOp, CheckpointTangentOp, CustomVjpTangentOp,
                 CustomVjpBwdOp)


# ---- symbol lookup and building ------------------------------------------------
# function type attribute -> (argument avals, result avals). (Attributes are uniqued and
# the key keeps its context alive; the expansion passes ask for the same few signatures
# many times.)
_SIGNATURES: dict = {}


def function_signature(fn: ir.Operation) -> Signature:
    attr = fn.attributes["function_type"]
    sig = _SIGNATURES.get(attr)
    if sig is None:
        ftype = ir.FunctionType(ir.TypeAttr(attr).value)
        sig = (tuple([aval_of(t) for t in ftype.inputs]),
               tuple([aval_of(t) for t in ftype.results]))
        if len(_SIGNATURES) >= 4096:
            _SIGNATURES.clear()
        # (symbolic dimensions are objects of the shape scope being traced: not kept)
        if all(type(d) is int for avals in sig for a in avals
               for d in getattr(a, "shape", ())):
            _SIGNATURES[attr] = sig
    return list(sig[0]), list(sig[1])


def enclosing_module(op: ir.Operation) -> ir.Operation | None:
    op = op.operation if hasattr(op, "operation") else op
    while op is not None:
        if op.name == "builtin.module":
            return op
        try:
            op = op.parent
        except (ValueError, AttributeError):
            return None
    return None


def module_signatures(op_or_module) -> SignatureLookup:
    """`signature(name)` for the functions of the module holding (or being) `op`."""
    module = enclosing_module(op_or_module)
    if module is None:
        raise InferError("transformation op is not inside a module; cannot find its callee")
    table = ir.SymbolTable(module)

    def signature(name: str) -> Signature:
        try:
            fn = table[str(name)]
        except KeyError:
            raise InferError(f"references @{name}, which is not a function in this "
                             f"module") from None
        if fn.operation.name != "func.func":
            raise InferError(f"references @{name}, which is a {fn.operation.name}, not "
                             f"a func.func")
        return function_signature(fn.operation)
    return signature


def emit_transform(b, cls: type[TransformOp], *operands: ir.Value,
                   signature: SignatureLookup | None = None, **params) -> list[ir.Value]:
    """Builds a transformation op with a Builder `b`; result types come from the callees
    (looked up in the module around the insertion point unless `signature` is given)."""
    params = cls.check_params(params)
    if signature is None:
        signature = module_signatures(b.ip.block.owner)
    avals = [aval_of(v.type) for v in operands]
    cls.check_operand_count(len(avals))
    out = cls.infer_with_callees(avals, params, signature)
    return list(cls.create(operands, out, params, loc=b.loc, ip=b.ip).results)


__all__ = ["CallOp", "CheckpointOp", "CheckpointNameOp", "XlaMetadataValueOp", "JvpOp", "VjpOp", "LinearTransposeOp", "VmapOp", "NOT_MAPPED", "batched_aval", "CustomJvpCallOp", "CustomVjpCallOp",
           "CheckpointTangentOp", "CustomVjpTangentOp", "CustomVjpBwdOp", "TransformOp", "TRANSFORM_OPS",
           "differentiable", "default_diff", "emit_transform", "function_signature",
           "module_signatures", "tensor_type"]
