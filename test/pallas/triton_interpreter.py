"""A NumPy interpreter for the Triton IR --jaxpr-pallas-to-triton emits (test-only).

No GPU runs in CI, so the tests run Triton modules here: every program of the launch grid
in turn, over flat NumPy buffers (one per kernel argument). It knows the ops our lowering
and JAX's emit for the tested kernels (tt, arith, math, scf); an unknown op fails the test.

    outs = run_triton(module, [x, y], [np.zeros(...)], grid=(2, 1, 1))

A pointer is a `Ptr(buffer index, element offsets)`; masked-off lanes are never read or
written, so out-of-bounds addresses under a mask are caught like on a GPU (an unmasked
out-of-bounds access raises IndexError here).
"""
from __future__ import annotations

import collections
import dataclasses

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

_FLOATS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
           "f64": np.float64}


@dataclasses.dataclass
class Ptr:
    buf: int
    off: np.ndarray


def np_dtype(t: ir.Type):
    """The NumPy dtype of a (scalar or tensor) MLIR type; None for pointers."""
    if isinstance(t, ir.RankedTensorType):
        t = t.element_type
    s = str(t)
    if s.startswith("!tt.ptr"):
        return None
    if s == "i1":
        return np.dtype(bool)
    if s.startswith("i"):
        return np.dtype(f"int{s[1:]}")
    return np.dtype(_FLOATS[s])


def _unsigned(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype == bool else x.view(np.dtype(f"uint{x.dtype.itemsize * 8}"))


_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
         5: np.greater_equal}
_CMPI_U = {6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}
_CMPF = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
         6: np.not_equal}
_CMPF_U = {8: np.equal, 9: np.greater, 10: np.greater_equal, 11: np.less,
           12: np.less_equal, 13: np.not_equal}


def _cmpf(pred, a, b):
    nan = np.isnan(a) | np.isnan(b)
    if pred in _CMPF:
        return _CMPF[pred](a, b) & ~nan
    if pred in _CMPF_U:
        return _CMPF_U[pred](a, b) | nan
    return {7: ~nan, 14: nan}[pred]


def _cmpi(pred, a, b):
    if pred in _CMPI:
        return _CMPI[pred](a, b)
    return _CMPI_U[pred](_unsigned(a), _unsigned(b))


def _erfinv(x):
    from math import erf
    # Newton steps on erf (test-only accuracy)
    y = np.zeros_like(x, dtype=np.float64)
    for _ in range(60):
        y = y - (np.vectorize(erf)(y) - x) / (2 / np.sqrt(np.pi) * np.exp(-y * y))
    return y


def _libm(name: str):
    import math
    fns = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
           "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
           "cbrt": np.cbrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
           "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
           "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
           "erf": np.vectorize(math.erf), "erfc": np.vectorize(math.erfc),
           "floor": np.floor, "ceil": np.ceil, "atan2": np.arctan2, "pow": np.power,
           "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), "rint": np.rint,
           "fabs": np.abs, "lgamma": np.vectorize(math.lgamma), "erfinv": _erfinv}
    return fns[name]


def _symbol(symbol: str):
    """__nv_expf / __nv_exp / __ocml_exp_f32 -> the NumPy function."""
    if symbol.startswith("__ocml_"):
        return _libm(symbol[len("__ocml_"):].rsplit("_", 1)[0])
    name = symbol[len("__nv_"):]
    try:
        return _libm(name)
    except KeyError:
        return _libm(name[:-1])


class Interpreter:
    def __init__(self, buffers: list[np.ndarray], pid: tuple, grid: tuple):
        self.buffers, self.pid, self.grid = buffers, pid, grid
        self.envs: list = []

    def run_block(self, block: ir.Block, args: list) -> list:
        # Region bodies (scf, tt.reduce) see the values of the blocks around them.
        outer = self.envs[-1] if self.envs else {}
        env = collections.ChainMap(dict(zip(block.arguments, args)), outer)
        self.envs.append(env)
        try:
            return self._run(block, env)
        finally:
            self.envs.pop()

    def _run(self, block: ir.Block, env) -> list:
        for op in block.operations:
            op = op.operation
            if op.name in ("tt.return", "scf.yield", "tt.reduce.return", "tt.scan.return",
                           "scf.condition"):
                return [env[v] for v in op.operands]
            outs = self.run_op(op, [env[v] for v in op.operands])
            for r, v in zip(op.results, outs):
                dt = np_dtype(r.type)
                env[r] = v if dt is None else np.asarray(v).astype(dt, copy=False)
        return []

    @staticmethod
    def scalar(a):
        if isinstance(a, ir.BoolAttr):
            return ir.BoolAttr(a).value
        if isinstance(a, ir.IntegerAttr):
            return ir.IntegerAttr(a).value
        return ir.FloatAttr(a).value

    def attr(self, op, name):
        a = op.attributes[name]
        if isinstance(a, ir.IntegerAttr):
            return ir.IntegerAttr(a).value
        if isinstance(a, ir.DenseI32ArrayAttr):
            return list(ir.DenseI32ArrayAttr(a))
        if isinstance(a, ir.StringAttr):
            return ir.StringAttr(a).value
        return a

    def run_op(self, op: ir.Operation, xs: list) -> list:  # noqa: C901 (one table)
        name = op.name
        rtype = op.results[0].type if len(op.results) else None
        shape = tuple(ir.RankedTensorType(rtype).shape) if isinstance(
            rtype, ir.RankedTensorType) else ()
        dt = np_dtype(rtype) if rtype is not None else None
        if name == "arith.constant":
            a = op.attributes["value"]
            if isinstance(a, (ir.DenseElementsAttr, ir.DenseIntElementsAttr,
                              ir.DenseFPElementsAttr)):
                return [np.full(shape, self.scalar(ir.DenseElementsAttr(a).get_splat_value()),
                                dt)]
            if isinstance(a, ir.BoolAttr):
                return [np.asarray(ir.BoolAttr(a).value)]
            if isinstance(a, ir.IntegerAttr):
                return [np.asarray(ir.IntegerAttr(a).value, dt)]
            return [np.asarray(ir.FloatAttr(a).value, dt)]
        if name == "tt.get_program_id":
            return [np.int32(self.pid[self.attr(op, "axis")])]
        if name == "tt.get_num_programs":
            return [np.int32(self.grid[self.attr(op, "axis")])]
        if name == "tt.make_range":
            return [np.arange(self.attr(op, "start"), self.attr(op, "end"), dtype=np.int32)]
        if name == "tt.splat":
            x = xs[0]
            if isinstance(x, Ptr):
                return [Ptr(x.buf, np.full(shape, x.off, np.int64))]
            return [np.full(shape, x, dt)]
        if name == "tt.broadcast":
            x = xs[0]
            if isinstance(x, Ptr):
                return [Ptr(x.buf, np.broadcast_to(x.off, shape).copy())]
            return [np.broadcast_to(x, shape).copy()]
        if name == "tt.expand_dims":
            x = xs[0]
            if isinstance(x, Ptr):
                return [Ptr(x.buf, np.expand_dims(x.off, self.attr(op, "axis")))]
            return [np.expand_dims(x, self.attr(op, "axis"))]
        if name == "tt.addptr":
            p, off = xs
            return [Ptr(p.buf, np.asarray(p.off, np.int64) + np.asarray(off, np.int64))]
        if name == "tt.load":
            sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
            p = xs[0]
            mask = xs[1] if sizes[1] else None
            other = xs[1 + sizes[1]] if sizes[2] else None
            buf = self.buffers[p.buf]
            off = np.asarray(p.off)
            out = np.zeros(off.shape, buf.dtype) if other is None else np.array(
                np.broadcast_to(other, off.shape), buf.dtype)
            m = np.ones(off.shape, bool) if mask is None else np.broadcast_to(mask, off.shape)
            out[m] = buf[off[m]]
            return [out]
        if name == "tt.store":
            p, val = xs[0], xs[1]
            mask = xs[2] if len(xs) > 2 else None
            off = np.asarray(p.off)
            m = np.ones(off.shape, bool) if mask is None else np.broadcast_to(mask, off.shape)
            self.buffers[p.buf][off[m]] = np.broadcast_to(val, off.shape)[m]
            return []
        if name == "tt.atomic_rmw":
            p, val = xs[0], xs[1]
            mask = xs[2] if len(xs) > 2 else None
            off = np.asarray(p.off)
            m = np.ones(off.shape, bool) if mask is None else np.broadcast_to(mask, off.shape)
            buf = self.buffers[p.buf]
            old = np.zeros(off.shape, buf.dtype)
            old[m] = buf[off[m]]
            kind = self.attr(op, "atomic_rmw_op")
            v = np.broadcast_to(val, off.shape)
            fn = {4: np.add, 5: np.add, 6: np.maximum, 7: np.minimum, 1: np.bitwise_and,
                  2: np.bitwise_or, 3: np.bitwise_xor, 10: lambda a, b: b}[kind]
            for o, x in zip(off[m].reshape(-1), v[m].reshape(-1)):   # serially, as atomics
                buf[o] = fn(buf[o], x)
            return [old]
        if name == "tt.dot":
            a, b, c = xs
            return [np.matmul(a.astype(np.float64) if a.dtype.kind == "f" else a,
                              b.astype(np.float64) if b.dtype.kind == "f" else b) + c]
        if name == "tt.join":
            return [np.stack([xs[0], xs[1]], axis=-1)]
        if name == "tt.split":     # (the last axis, of size 2, taken apart)
            return [xs[0][..., 0], xs[0][..., 1]]
        if name == "tt.trans":
            return [np.transpose(xs[0], self.attr(op, "order"))]
        if name == "tt.reshape":
            return [np.reshape(xs[0], shape)]
        if name == "tt.unsplat":
            return [np.reshape(xs[0], ())]
        if name == "tt.bitcast":
            return [np.asarray(xs[0]).view(dt)]
        if name == "tt.fp_to_fp":
            return [np.asarray(xs[0]).astype(dt)]
        if name == "tt.extern_elementwise":
            fn = _symbol(self.attr(op, "symbol"))
            return [fn(*[np.asarray(x, np.float64) for x in xs])]
        if name == "tt.reduce":
            axis = self.attr(op, "axis")
            region = op.regions[0].blocks[0]
            accs = [np.take(x, 0, axis=axis) for x in xs]
            for i in range(1, xs[0].shape[axis]):
                nxt = [np.take(x, i, axis=axis) for x in xs]
                accs = [np.asarray(v).astype(a.dtype) for v, a in
                        zip(self.run_block(region, accs + nxt), accs)]
            return accs
        if name == "tt.scan":
            axis = self.attr(op, "axis")
            reverse = ir.BoolAttr(op.attributes["reverse"]).value
            region = op.regions[0].blocks[0]
            x = np.moveaxis(xs[0], axis, 0)
            order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
            out, acc = np.empty_like(x), None
            for i in order:
                acc = x[i] if acc is None else np.asarray(
                    self.run_block(region, [acc, x[i]])[0]).astype(x.dtype)
                out[i] = acc
            return [np.moveaxis(out, 0, axis)]
        if name == "scf.for":
            lb, ub, step, *iters = xs
            body = op.regions[0].blocks[0]
            i = lb
            while i < ub:
                iters = self.run_block(body, [np.asarray(i, np.asarray(lb).dtype)] + iters)
                i = i + step
            return iters
        if name == "scf.while":
            before, after = (r.blocks[0] for r in op.regions)
            vals = xs
            while True:
                cond_op = list(before.operations)[-1].operation
                outs = self.run_block(before, vals)
                if not bool(outs[0]):
                    return outs[1:]
                vals = self.run_block(after, outs[1:])
            del cond_op
        if name == "scf.if":
            region = op.regions[0] if bool(xs[0]) else op.regions[1]
            blocks = list(region.blocks)
            return self.run_block(blocks[0], []) if blocks else []
        return [self.elementwise(name, op, xs, dt)]

    def elementwise(self, name, op, xs, dt):
        a = xs[0]
        b = xs[1] if len(xs) > 1 else None
        simple = {"arith.addf": np.add, "arith.addi": np.add, "arith.subf": np.subtract,
                  "arith.subi": np.subtract, "arith.mulf": np.multiply,
                  "arith.muli": np.multiply, "arith.divf": np.divide,
                  "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
                  "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
                  "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
                  "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or,
                  "arith.xori": np.bitwise_xor, "arith.remf": np.fmod,
                  "arith.shli": np.left_shift, "arith.shrsi": np.right_shift,
                  "math.absf": np.abs, "math.absi": np.abs, "math.floor": np.floor,
                  "math.ceil": np.ceil, "math.exp": np.exp, "math.log": np.log,
                  "math.sqrt": np.sqrt, "math.erf": _libm("erf")}
        with np.errstate(all="ignore"):
            if name in simple:
                return simple[name](*xs)
            if name == "arith.negf":
                return -a
            if name == "arith.divsi":
                return np.trunc(a / b).astype(a.dtype) if a.dtype.kind == "i" else a // b
            if name == "arith.remsi":
                return np.fmod(a, b)
            if name in ("arith.divui", "arith.remui", "arith.maxui", "arith.minui",
                        "arith.shrui"):
                fn = {"arith.divui": np.floor_divide, "arith.remui": np.remainder,
                      "arith.maxui": np.maximum, "arith.minui": np.minimum,
                      "arith.shrui": np.right_shift}[name]
                return fn(_unsigned(a), _unsigned(b)).view(np.asarray(a).dtype)
            if name in ("math.ctpop", "math.ctlz"):
                bits = np.unpackbits(_unsigned(a).astype(">u4").view(np.uint8)).reshape(
                    -1, 32)
                if name == "math.ctpop":
                    return bits.sum(1).reshape(np.shape(a))
                lead = np.where(bits.any(1), bits.argmax(1), 32)
                return lead.reshape(np.shape(a))
            if name == "arith.cmpi":
                return _cmpi(self.attr(op, "predicate"), a, b)
            if name == "arith.cmpf":
                return _cmpf(self.attr(op, "predicate"), a, b)
            if name == "arith.select":
                return np.where(xs[0], xs[1], xs[2])
            if name in ("arith.extf", "arith.truncf", "arith.sitofp", "arith.extsi",
                        "arith.trunci", "arith.fptosi", "arith.fptoui"):
                return np.asarray(a).astype(dt)
            if name == "arith.extui":
                return _unsigned(a).astype(dt)
            if name == "arith.uitofp":
                return _unsigned(a).astype(dt)
            if name == "arith.bitcast":
                return np.asarray(a).view(dt)
        raise NotImplementedError(f"triton_interpreter: no rule for {name}")


def run_triton(module: ir.Module, inputs: list, outputs: list, grid: tuple) -> list:
    """Runs the module's tt.func for every program of `grid` (x, y, z) over flat copies
    of `inputs` and `outputs` (initial output contents); returns the outputs."""
    [fn] = [op.operation for op in module.body.operations
            if op.operation.name == "tt.func"]
    arrays = [np.array(a) for a in list(inputs) + list(outputs)]
    buffers = [a.reshape(-1) if a.dtype != bool else a.reshape(-1).view(np.int8)
               for a in arrays]
    args = [Ptr(i, np.int64(0)) for i in range(len(buffers))]
    gx, gy, gz = grid
    for z in range(gz):
        for y in range(gy):
            for x in range(gx):
                Interpreter(buffers, (x, y, z), grid).run_block(fn.regions[0].blocks[0],
                                                                args)
    return arrays[len(inputs):]
