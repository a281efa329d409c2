"""JAX's compact jaxpr pretty print, read from a traced `jaxpr` func.

    { lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }
"""
from __future__ import annotations

import re

from mjax.specs import dtypes
from mjax.dialect import OPS, aval_of
from mjax.dialect.attributes import Dim, Shape, decode
from mjax.dialect.types import KEY_TAGS, ShapedArray
from mjax.dialect.ops.sharding import DEVICE_PUT_MARK
from mjax.dialect.values import attr as attribute_of, is_argument, set_attr
from mjax.tracing.hijax_tracer import HI_TYPES, hi_signature
from mjax.lax.indexing import (GatherDimensionNumbers, GatherScatterMode,
                               ScatterDimensionNumbers)
from mjax.lax.parallel import PVARY_MARK
from mjax.lax.precision import precision_from_attr
from mjax.passes import custom_rules
from mjax.passes.rules import remat as remat_rules
from mjax.jaxpr.pretty_types import SEED
from mjax.spmd.shard_map_print import as_jax_eqn, body_of, shard_map_eqn
from mjax.tracing.staging import user_name


def _names():
    """a, b, ..., z, ba, bb, ...: JAX writes the count in base 26 with digits a-z."""
    import itertools
    for n in itertools.count():
        name = ""
        while not name or n:
            n, digit = divmod(n, 26)
            name = chr(ord("a") + digit) + name
        yield name


def _fmt_param(v):
    import numpy as np
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, np.ndarray):
        return repr(v.tolist()) if v.size <= 8 else f"array{v.shape}"
    return str(v)          # (JAX's printer: str of each value, strings unquoted)


def _param(op, name: str):
    value = decode(op.attributes[name])
    if name == "precision":       # (contractions: JAX's Precision pair or dot algorithm)
        return precision_from_attr(value)
    kind = getattr(type(op.opview), "attributes", {}).get(name)
    if isinstance(kind, (Shape, Dim)) or getattr(kind, "dims", False):
        # (symbolic dimensions: as expressions)
        value = kind.normalize(value)
    return value


_WIDTH = 80  # JAX's pretty-printing width

_REGION_PARAMS = {
    "jaxpr.call": lambda regions: {},   # see _Printer._jit_params
    # op name -> how its regions print, as JAX names them (params sorted as JAX does)
    "jaxpr.cond": lambda regions: {"branches": regions},
    "jaxpr.while": lambda regions: {"body_jaxpr": regions[1], "cond_jaxpr": regions[0]},
    "jaxpr.scan": lambda regions: {"jaxpr": regions[0]},
}


class _Printer:
    """Names values in order of appearance (one sequence through nested bodies, as JAX)."""

    def __init__(self, types=None):
        self.types = types       # explicit mode: values' sharding types (pretty_types)
        self.names = _names()
        self.env: dict = {}
        self.literal: dict = {}
        self.preset: dict = {}   # values whose names are given (a jit's body, as JAX)
        self.depth = 0           # how many jaxprs enclose the equation being printed
        self.bodies: list = []   # shard_map bodies being printed (their varying axes)
        self.override: dict = {}  # operands of the next equation cast by pvary
        self.meshed = False      # the printed function holds a shard_map

    def var(self, v) -> str:
        return self.override.get(v) or self.literal.get(v) or self.env.get(v, "?")

    def bind(self, v) -> str:
        self.env[v] = self.preset.pop(v, None) or next(self.names)
        return f"{self.env[v]}:{self.type_text(v)}"

    def type_text(self, v) -> str:
        shown = self.types.type_text(v) if self.types is not None else None
        shown = shown or aval_of(v.type).str_short()
        for body in self.bodies:    # (a shard_map body's value: its varying axes)
            if v in body.varying:
                return shown + body.suffix(v)
        return shown

    def jaxpr(self, block, indent: int, n_consts: int = 0, col: int | None = None,
              n_captured: int = 0) -> str:
        """`{ lambda consts ; args. let eqns in (outs) }`: on one line when it fits in
        JAX's width of 80 from column `col` (default: indent), else with eqns indented
        by indent + 4. The last `n_captured` arguments (a nested jit's closure) are
        listed first among the arguments, as JAX does."""
        args = list(block.arguments)
        n_user = len(args) - n_consts
        const_args = args[n_user:]
        consts = " ".join(self._hi_binders(const_args, _const_groups(block, const_args)))
        user = _captured_first(args[:n_user], n_captured)
        sig = _block_signature(block, n_user, n_captured)   # (a jit of hi values)
        invars = " ".join(self._hi_binders(args[:n_user], sig[0]) if sig else
                          [self.bind(a) for a in user])
        eqns, outs = [], []
        body = body_of(self, block)
        for op in block.operations:
            op = op.operation  # (an OpView's `attributes` is its class's schema)
            if op.name in ("func.return", "jaxpr.yield"):
                outs = [self.var(v) for v in _firsts(list(op.operands), sig and sig[1])]
                break
            if op.name == "jaxpr.constant" and self._inline_literal(op):
                if (self.types is not None or self.meshed) and SEED in op.attributes:
                    # (JAX's grad reshards its cotangent seed to the output's type)
                    r = op.results[0]
                    eqns.append(f"{' ' * (indent + 4)}{self.bind(r)} = reshard "
                                f"{self.literal.pop(r)}")
                continue
            if "mjax.implicit_broadcast" in op.attributes:
                # JAX's lax ops take scalar / size-1 operands unbroadcast: no equation.
                self.literal[op.results[0]] = self.var(op.operands[0])
                continue
            self.depth += 1
            if body is not None:
                eqns += body.casts(self, op, indent + 4)
            eqns.append(self.eqn(op, indent + 4))
            self.override.clear()
            self.depth -= 1
        tail = f"in ({', '.join(outs)}{',' if len(outs) == 1 else ''}) }}"
        head = f"{{ lambda {consts}; {invars}. let"
        if not any("\n" in e for e in eqns):
            line = f"{head} {'; '.join(e.strip() for e in eqns)} {tail}"
            if len(line) + (indent if col is None else col) <= _WIDTH:
                return line
        return "\n".join([head] + eqns + [" " * (indent + 2) + tail])

    def _inline_literal(self, op) -> bool:
        import numpy as np
        value = decode(op.attributes["value"])
        flat = value.reshape(-1)
        if value.ndim == 0 or not any(value.strides) or (
                flat.size and bool((flat == flat[0]).all())):  # scalars and splats inline
            # A splat prints as JAX's scalar literal (`3.0:f32[]`): mjax folds the
            # broadcast of a Python scalar into the constant.
            scalar = ShapedArray((), aval_of(op.results[0].type).dtype)
            # A NumPy scalar of the op's dtype prints as JAX does (1.67, not 1.66999995...).
            first = value.reshape(-1)[0].astype(scalar.dtype) if value.size else 0
            if "mjax.weak_type" not in op.attributes and \
                    dtypes.issubdtype(scalar.dtype, np.floating):
                # JAX holds a Python scalar cast to a strong float type as the Python float
                # of the rounded value: 0.1 -> 0.10000000149011612:f32[].
                first = float(first)
            self.literal[op.results[0]] = f"{first!s}:{scalar.str_short()}"
            return True
        return False

    def _jit_params(self, op, outs: str) -> dict:
        """A `jaxpr.call` as JAX prints a nested jit: name= and jaxpr= the callee's body,
        whose binders take the names of the operands and whose results take the names of
        the call's results."""
        block, name = callee_block(op)
        params = {"name": user_name(name)}
        if block is None:
            return params
        for arg, v in zip(block.arguments, op.operands):
            if v in self.env:
                self.preset[arg] = self.env[v]
        ret = list(block.operations)[-1].operation
        for v, r in zip(ret.operands, op.results):
            if is_argument(v) or v in self.preset:
                continue
            if r in self.env:
                self.preset[v] = self.env[r]
            elif not list(r.uses) and self.depth <= 1 and len(list(v.uses)) == 1:
                self.preset[v] = "_"     # (JAX: an unused result is `_` inside too)
        params["jaxpr"] = block
        params["n_captured"] = _n_captured(block)
        return params

    def _custom_eqn(self, op, custom, pad: str, outs: str, name: str, indent: int) -> str:
        """A custom_jvp/custom_vjp call as JAX prints it: the function's name, its body
        as call_jaxpr, the rules' Python names, and the closed-over values first."""
        block, callee = callee_block(op)
        if block is None:
            return None
        n_consts = int(_param(op, "num_consts")) if "num_consts" in op.attributes else 0
        fun = getattr(custom, "fun", None)
        params = {"name": getattr(fun, "__name__", None) or user_name(callee)}
        if name == "custom_jvp_call":
            rules = {"jvp": custom.jvp}
        else:
            rules = {"bwd": custom.bwd, "fwd": custom.fwd}
        rules = {k: getattr(f, "__name__", type(f).__name__) for k, f in rules.items()}
        body = self.jaxpr(block, indent + 2, col=indent + 13, n_captured=n_consts)
        params.update(sorted({**rules, "call_jaxpr": body,
                              **({"num_consts": str(n_consts)} if n_consts else {}),
                              "symbolic_zeros": str(bool(custom.symbolic_zeros))}.items()))
        ins = " ".join(self.var(v) for v in _captured_first(list(op.operands), n_consts))
        lhs = f"{pad}{outs + ' = ' if outs else ''}{name}["
        line = f"{lhs}{' '.join(f'{k}={v}' for k, v in params.items())}] {ins}".rstrip()
        if "\n" not in body and len(line) <= _WIDTH:
            return line
        return "\n".join([lhs] + [f"{pad}  {k}={v}" for k, v in params.items()] +
                         [f"{pad}] {ins}".rstrip()])

    def _ref_eqn(self, op, outs: str) -> str:
        """A ref op as JAX prints it: `x <- r[...]`, `r[1,:] <- v`, `old, r[i,:] <- r[i,:],
        v`, `r[c:c+1] += v`."""
        n_values = {"jaxpr.ref_get": 0}.get(op.name, 1)
        ref, values = op.operands[0], list(op.operands[1:1 + n_values])
        starts = list(op.operands[1 + n_values:])
        sizes = _param(op, "sizes")
        squeezed = set(_param(op, "squeezed") or ())
        shape = aval_of(ref.type).shape
        dims = []
        for d, (v, size) in enumerate(zip(starts, sizes)):
            text = self.var(v)
            start = text.split(":")[0] if v in self.literal else text
            if d in squeezed:
                dims.append(start)
            elif v in self.literal:     # (JAX leaves out a 0 start and a stop at the end)
                stop = int(start) + size
                dims.append(f"{'' if start == '0' else start}:"
                            f"{'' if stop == shape[d] else stop}")
            else:
                dims.append(f"{start}:{start}+{size}")
        place = f"{self.var(ref)}[{'...' if all(x == ':' for x in dims) else ','.join(dims)}]"
        if op.name == "jaxpr.ref_get":
            return f"{outs} <- {place}"
        value = self.var(values[0])
        if op.name == "jaxpr.ref_addupdate":
            return f"{place} += {value}"
        if list(op.results[0].uses) or self.depth > 1:
            return f"{outs}, {place} <- {place}, {value}"
        return f"{place} <- {value}"

    def _combiner(self, name: str, op, col: int) -> str:
        """A scatter's `update_jaxpr`, as JAX prints it: None for a plain scatter, else
        the scalar function combining an operand's element with an update's."""
        if name == "scatter":
            return "None"
        t = ShapedArray((), aval_of(op.results[0].type).dtype).str_short()
        x, y, z = next(self.names), next(self.names), next(self.names)
        fn = _SCATTERS[name]
        line = f"{{ lambda ; {x}:{t} {y}:{t}. let {z}:{t} = {fn} {x} {y} in ({z},) }}"
        if col + len(line) <= _WIDTH:
            return line
        pad = " " * (col - 13)
        return (f"{{ lambda ; {x}:{t} {y}:{t}. let\n{pad}    {z}:{t} = {fn} {x} {y}\n"
                f"{pad}  in ({z},) }}")

    def _hi_binders(self, values: list, groups) -> list:
        """Binders of `values` grouped by (hi type or None, indices): one name per hi
        value (all its lo values), typed by the hi type's str_short, as JAX prints it."""
        out = []
        for ty, group in groups:
            vals = [values[i] for i in group]
            if not vals:
                continue
            if not getattr(ty, "is_high", False):
                out += [self._bind_typed(v, ty) for v in vals]
                continue
            text = ty.str_short(short_dtypes=True)
            if not any(list(v.uses) for v in vals) and self.depth == 1:
                out.append(f"_:{text}")     # (JAX: an unused result in the outermost)
                continue
            name = self.preset.pop(vals[0], None) or next(self.names)
            for v in vals:
                self.preset.pop(v, None)
                self.env[v] = name
            out.append(f"{name}:{text}")
        return out

    def _bind_typed(self, v, aval) -> str:
        """A binder typed by `aval` (a hijax primitive's result type, with its sharding)
        where it describes the value; else by the value's own type."""
        if aval is None or tuple(getattr(aval, "shape", ())) != aval_of(v.type).shape:
            return self.bind(v)
        self.env[v] = self.preset.pop(v, None) or next(self.names)
        return f"{self.env[v]}:{aval.str_short()}"

    def eqn(self, op, indent: int) -> str:
        pad = " " * indent
        params = {name: _fmt_param(_param(op, name)) for name in op.attributes
                  if not name.startswith("mjax.")}   # (mjax's notes, not parameters)
        view = _hi_view(op)
        if view is None and op.name == "jaxpr.call" and HI_TYPES:   # (a hi jit called)
            block = callee_block(op)[0]
            view = None if block is None else _block_signature(
                block, len(op.operands), _n_captured(block), reorder=False)
        if view is not None:       # (a hijax primitive's call: its hi values as one each)
            ins = " ".join(self.var(v) for v in _firsts(list(op.operands), view[0]))
            outs = " ".join(self._hi_binders(list(op.results), view[1]))
        else:
            ins = " ".join(self.var(v) for v in op.operands)
            # JAX: the outermost jaxpr's unused results print as `_` (nested ones named)
            outs = " ".join(self.bind(r) if list(r.uses) or self.depth > 1 else
                            f"_:{self.type_text(r)}" for r in op.results)
        if op.name in _REF_FORMS:
            return pad + self._ref_eqn(op, outs)
        name = _display_name(op.name.split(".", 1)[1], params, op)
        if op.name == "jaxpr.shard_map":
            return shard_map_eqn(self, op, callee_block(op)[0], pad, outs, indent)
        if PVARY_MARK in op.attributes:    # (lax.pcast to varying: JAX's pvary)
            name, params = "pvary", {"axes": repr(tuple(
                str(a).strip('"') for a in op.attributes[PVARY_MARK]))}
        if name == "sharding_constraint" and self.types is not None and \
                DEVICE_PUT_MARK not in op.attributes and self.types.names_explicit(op):
            name, params = "reshard", {}    # (explicit mode: JAX's reshard, typed result)
        fix = _JAX_PARAMS.get(name)
        if fix is not None:
            name, params = fix(op, params)
        body = body_of(self, op.block) if self.bodies else None
        if body is not None:      # (a collective in a shard_map body)
            name, params = as_jax_eqn(body, op, name, params)
        if name in _SCATTERS:     # (JAX's combiner jaxpr, named after the results)
            params["update_jaxpr"] = self._combiner(name, op, len(pad) + 15)
        params = dict(sorted(params.items()))
        if name in ("custom_jvp_call", "custom_vjp_call"):
            custom = custom_rules.custom_of(op)
            shown = None if custom is None else \
                self._custom_eqn(op, custom, pad, outs, name, indent)
            if shown is not None:
                return shown
        regions_of = _REGION_PARAMS.get(op.name)
        if op.name == "jaxpr.checkpoint":     # (JAX's remat2, its body nested)
            body = callee_block(op)[0]
            if body is not None:
                name, regions_of = "remat2", lambda regions: {}
                params = {"differentiated": "False", "jaxpr": body,
                          "policy": _policy_text(op), "prevent_cse": params["prevent_cse"]}
        if regions_of is None:
            pstr = ("[" + " ".join(f"{k}={v}" for k, v in params.items()) + "]") if params else ""
            lhs = f"{outs} = " if outs else ""    # JAX: no `=` for effects-only eqns
            line = f"{pad}{lhs}{name}{pstr} {ins}"   # JAX keeps the space: `iota[...] `
            line = line if pstr else line.rstrip()
            # (JAX's width check stops at the parameters' closing bracket)
            if len(f"{pad}{lhs}{name}{pstr}") <= _WIDTH or not params:
                return line
            # Too wide: one parameter per line, as JAX breaks it.
            return "\n".join([f"{pad}{lhs}{name}["] +
                             [f"{pad}  {k}={v}" for k, v in params.items()] +
                             [f"{pad}] {ins}".rstrip()])
        if op.name == "jaxpr.call":
            params = self._jit_params(op, outs)
        else:
            params.update(regions_of([r.blocks[0] for r in op.regions]))
        lhs = f"{pad}{outs + ' = ' if outs else ''}{name}["
        if op.name == "jaxpr.call":   # JAX: name first; on one line when it fits
            n_captured = params["n_captured"]
            ins = " ".join(self.var(v) for v in _captured_first(
                _firsts(list(op.operands), view and view[0]), n_captured))
            body = self.jaxpr(params["jaxpr"], indent + 2, col=indent + 8,
                              n_captured=n_captured)
            line = f"{lhs}name={params['name']} jaxpr={body}] {ins}".rstrip()
            if "\n" not in body and len(line) <= _WIDTH:
                return line
            return "\n".join([lhs, f"{pad}  name={params['name']}", f"{pad}  jaxpr={body}",
                              f"{pad}] {ins}".rstrip()])
        lines = [lhs]
        for key in sorted(params):
            value = params[key]
            if isinstance(value, list):  # cond branches: one jaxpr per line
                lines.append(f"{pad}  {key}=(")
                lines += [f"{pad}    {self.jaxpr(b, indent + 4)}" for b in value]
                lines.append(f"{pad}  )")
            elif not isinstance(value, str):
                lines.append(f"{pad}  {key}="
                             f"{self.jaxpr(value, indent + 2, col=indent + 3 + len(key))}")
            else:
                lines.append(f"{pad}  {key}={value}")
        lines.append(f"{pad}] {ins}".rstrip())
        return "\n".join(lines)


# Ref ops print as JAX's state primitives do (Pallas kernels' too).
_REF_FORMS = ("jaxpr.ref_get", "jaxpr.ref_swap", "jaxpr.ref_addupdate")

_N_CAPTURED = "mjax.n_captured"


def mark_captured(func_op, n: int) -> None:
    """Records on a nested jit's function that its last `n` arguments are captured values
    (a closure's), which JAX's jaxprs list first."""
    set_attr(func_op, _N_CAPTURED, int(n))


def _n_captured(block) -> int:
    try:
        return int(attribute_of(block.region.owner, _N_CAPTURED, 0))
    except AttributeError:
        return 0


def _captured_first(values: list, n: int) -> list:
    return values[len(values) - n:] + values[:len(values) - n] if n else values


def callee_block(op, attr: str = "callee"):
    """(entry block, name) of the function a call-like op names in attribute `attr`
    (block None if not found)."""
    name = params_callee = str(decode(op.attributes[attr])).lstrip("@").strip("'\"")
    module = op.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return None, params_callee
    for f in module.regions[0].blocks[0].operations:
        f = f.operation
        if f.name == "func.func" and \
                str(f.attributes["sym_name"]).strip('"') == name:
            return f.regions[0].blocks[0], name
    return None, name


_CALLBACK_NAMES = {"pure": "pure_callback", "unordered": "io_callback",
                   "ordered": "io_callback", "debug": "debug_callback",
                   "debug_ordered": "debug_callback"}


def _dot_general_params(op, params):
    """JAX prints dimension numbers as lists and the preferred (result) element type."""
    import numpy as np
    (lc, rc), (lb, rb) = decode(op.attributes["dimension_numbers"])
    lists = tuple(tuple(list(map(int, d)) for d in pair) for pair in ((lc, rc), (lb, rb)))
    out = {**params, "dimension_numbers": str(lists)}
    out.setdefault("preferred_element_type",
                   np.dtype(aval_of(op.results[0].type).dtype).name)
    return "dot_general", out


_SCATTERS = {"scatter": None, "scatter-add": "add", "scatter-mul": "mul",
             "scatter-min": "min", "scatter-max": "max"}


def _indexing_params(op, params, numbers_class) -> dict:
    """A gather's or scatter's params with JAX's reprs: its dimension numbers as the
    NamedTuple JAX prints, its mode as the GatherScatterMode member."""
    dn = decode(op.attributes["dimension_numbers"])
    numbers = numbers_class(**{f: tuple(int(d) for d in dn.get(f, ()))
                               for f in numbers_class._fields})
    mode = str(params.get("mode", "")).strip("'\"")
    return {**params, "dimension_numbers": repr(numbers),
            "mode": str(GatherScatterMode.from_any(mode)) if mode else mode}


def _gather_params(op, params):
    """fill_value is None unless given, as JAX shows it."""
    return "gather", {**_indexing_params(op, params, GatherDimensionNumbers),
                      "fill_value": params.get("fill_value", "None")}


def _scatter_params(name):
    def fix(op, params):
        return name, {**_indexing_params(op, params, ScatterDimensionNumbers),
                      "update_consts": "()"}
    return fix


def _algorithm_params(enum_name):
    """JAX's eigh and svd parameters: the algorithm as its enum's member
    (EighImplementation.QDWH, SvdAlgorithm.QR: the member's value upper-cased is its
    name), None and subset_by_index=None shown."""
    def fix(params):
        algorithm = str(params.get("algorithm", "")).strip("'\"")
        return {**params, "algorithm": f"{enum_name}.{algorithm.upper()}"
                if algorithm else "None",
                "subset_by_index": params.get("subset_by_index", "None")}
    return fix


_eigh_params = _algorithm_params("EighImplementation")
_svd_params = _algorithm_params("SvdAlgorithm")


def _key_impl_params(name):
    """A key implementation by JAX's short name, as key types print (fry, rbg, urbg)."""
    def fix(op, params):
        impl = str(params.get("impl", "")).strip("'\"")
        return name, {**params, "impl": KEY_TAGS.get(impl, impl)}
    return fix


# Parameters JAX's jaxprs show that mjax's ops leave implicit (their default values), and
# ops JAX prints under another name with its parameters hidden.
_JAX_PARAMS = {
    "gather": _gather_params,
    **{name: _scatter_params(name) for name in _SCATTERS},
    **{name: _key_impl_params(name) for name in ("random_seed", "random_wrap")},
    "broadcast_in_dim": lambda op, p: ("broadcast_in_dim", _broadcast_dims(
        decode(op.attributes["broadcast_dimensions"]))),
    "expand_dims": lambda op, p: ("broadcast_in_dim", _broadcast_dims(
        [i for i in range(aval_of(op.results[0].type).ndim)
         if i not in set(decode(op.attributes["dimensions"]))])),
    "reduce_sum": lambda op, p: ("reduce_sum", {"out_sharding": "None", **p}),
    "rng_bit_generator": lambda op, p: ("rng_bit_generator", {"out_sharding": "None", **p}),
    "convert_element_type": lambda op, p: ("convert_element_type", {
        "weak_type": str("mjax.weak_type" in op.attributes), **p}),
    "reshape": lambda op, p: ("reshape", {"dimensions": "None", "sharding": "None", **p}),
    "slice": lambda op, p: ("slice", {"strides": "None", **p}),
    "iota": lambda op, p: ("iota", {"sharding": "None", **p}),
    "dot_general": _dot_general_params,
    "eigh": lambda op, p: ("eigh", _eigh_params(p)),
    "svd": lambda op, p: ("svd", _svd_params(p)),
    "dim_as_value": lambda op, p: ("dim_as_value", {"dim": p["dim"]}),  # (dtype: the type's)
    "ref_new": lambda op, p: ("new_ref", {"kind": "None", "memory_space": "None", **p}),
    # a custom call of a hijax primitive: JAX's call_hi_primitive equation
    "custom_vjp_call": lambda op, p: _custom_call(op, "custom_vjp_call", p),
    "custom_jvp_call": lambda op, p: _custom_call(op, "custom_jvp_call", p),
    # a user-defined primitive: its own name and parameters (mjax/tracing/primitive.py)
    "custom_primitive": lambda op, p: (decode(op.attributes["name"]), dict(
        decode(op.attributes["params"])) if "params" in op.attributes else {}),
}


def _policy_text(op) -> str:
    """A checkpoint's policy as JAX prints it: None (the default), DotsSaveable(...) for
    the dots policies, else the policy function's repr."""
    kind = str(decode(op.attributes["policy"])).strip("'\"") \
        if "policy" in op.attributes else None
    if kind is None:
        return "None"
    if kind in ("dots_saveable", "dots_with_no_batch_dims_saveable"):
        return f"DotsSaveable(only_if_no_batch_dims={kind != 'dots_saveable'})"
    if kind == "callable":      # (JAX masks the function's address)
        key = str(decode(op.attributes["names"])[0]).strip("'\"")
        return re.sub(r"0x[0-9a-fA-F]+", "0xXXXXXXXXXXXX",
                      repr(remat_rules.callable_policy(key)))
    if kind in remat_rules.NAMED_POLICIES:
        return f"<function {kind} at 0xXXXXXXXXXXXX>"
    return kind


def _custom_call(op, name: str, params: dict) -> tuple:
    """(name, params) of a custom call: those its custom function gives as
    `jaxpr_equation` (mjax.experimental.hijax_vjp), else its own."""
    shown = custom_rules.custom_attribute(op, "jaxpr_equation") \
        if "rule" in op.attributes else None
    return shown if shown is not None else (name, params)


def _hi_view(op):
    """A hijax primitive's call's groups of operands and results, each (hi type or None,
    indices), as its custom function gives them (mjax.experimental.hijax_vjp_hi)."""
    if op.name != "jaxpr.custom_vjp_call" or "rule" not in op.attributes:
        return None
    return custom_rules.custom_attribute(op, "hi_view")


def _const_groups(block, consts: list) -> list:
    """The (type, indices) groups of a function's constants: those a hijax primitive's
    call takes as one hi value (a hi value the function closes over) form one group."""
    index = {v: i for i, v in enumerate(consts)}
    first: dict = {}
    for op in block.operations if consts else ():
        view = _hi_view(op.operation)
        for ty, group in (view[0] if view else ()):
            vals = [op.operands[i] for i in group]
            if getattr(ty, "is_high", False) and vals and all(v in index for v in vals):
                first.setdefault(index[vals[0]], (ty, [index[v] for v in vals]))
    taken = {i for _, g in first.values() for i in g}
    return [first[i] if i in first else (None, [i]) for i in range(len(consts))
            if i in first or i not in taken]


def _firsts(values: list, groups) -> list:
    """The first value of each group (one per hi value), or all values if no groups."""
    if not groups:
        return values
    return [values[g[0]] for _, g in groups if g]


def _broadcast_dims(dims) -> dict:
    """JAX shows broadcast_in_dim's broadcast_dimensions unless empty (the shape never)."""
    dims = tuple(int(d) for d in dims)
    return {"broadcast_dimensions": str(dims)} if dims else {}


def _display_name(name: str, params: dict, op=None) -> str:
    """JAX's primitive name where one mjax op stands for several (jaxpr.callback, the
    add of tangents that JAX calls add_any)."""
    if name == "add" and op is not None and "mjax.add_any" in op.attributes:
        return "add_any"   # (passes/rules/ad_util.py: ADD_ANY)
    if name == "callback":
        return _CALLBACK_NAMES.get(str(params.get("effect", "")).strip("'\""), name)
    cls = OPS.get("jaxpr." + name)
    return cls.jax_name if cls is not None else name


def pretty_print(func_op, n_consts: int = 0, types=None) -> str:
    """Prints a func.func of jaxpr ops the way `jax.make_jaxpr` does, with the bodies of
    cond/while/scan nested in their equations; `types` (pretty_types.PrintTypes, explicit
    mode) gives values' sharding types."""
    block = func_op.regions[0].blocks[0]
    printer = _Printer(types)
    # (a shard_map's results carry its mesh in JAX's types: grad reshards its seed then)
    printer.meshed = any(op.operation.name == "jaxpr.shard_map" for op in block.operations)
    return printer.jaxpr(block, 0, n_consts)


def _index_groups(groups, n_values: int) -> list:
    """(hi type or None, count) per leaf -> (hi type or None, indices), with one group
    per value after those the leaves cover (a closure's captured values)."""
    out, k = [], 0
    for ty, n in groups:
        out.append((ty, list(range(k, k + n))))
        k += n
    return out + [(None, [i]) for i in range(k, n_values)]


def _block_signature(block, n_args: int, n_captured: int, reorder: bool = True):
    """A hi jit's function's (argument groups, result groups) for its block with
    `n_args` arguments (the last `n_captured` captured: listed first if `reorder`, as
    JAX prints them), or None (no hi values: mjax.tracing.hijax_tracer.mark_hi_signature)."""
    owner = block.region.owner.operation
    sig = hi_signature(owner) if owner.name == "func.func" else None
    if sig is None:
        return None
    ret = list(block.operations)[-1].operation
    ins = _index_groups(sig[0], n_args)
    if reorder and n_captured:
        ins = ins[len(ins) - n_captured:] + ins[:len(ins) - n_captured]
    return ins, _index_groups(sig[1], len(ret.operands))
