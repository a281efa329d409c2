"""`jaxpr.pallas_call`: runs a Pallas kernel (a private function over refs) over a grid.

    %outs = "jaxpr.pallas_call"(%a, %b) {
        callee = @kernel, name = "kernel", grid = array<i64: 4, 2>,
        in_specs = [{block_shape = array<i64: 8, 128>, index_map = @kernel_in0_index_map}, ...],
        out_specs = [{block_shape = ..., index_map = ...}, ...],
        scratch_shapes = [memref<8x128xf32>, ...],
        input_output_aliases = array<i64: ...>,      // flattened (input, output) pairs
        interpret = true, compiler_params = {num_warps = 4, num_stages = 3}
    } : (...) -> (...)

The kernel `@callee` takes refs in JAX's order: one per input block, one per output
block, then the scratch buffers; it returns nothing. An index map is a private function
from the grid indices (i32 scalars) to block indices (i32 scalars, one per array dim);
the element offset along dim d is index * block size. A block size of -1 is JAX's `None`
(a squeezed dim of size 1 that the kernel's ref does not have). A spec's optional
`element_padding` marks element dims (JAX's pl.Element): their index maps give element
offsets into the array padded by (low, high) (see element_padding). Results are the outputs,
whose types the op declares. Lowered by `--jaxpr-pallas-interpret` (a loop over the grid)
or, on GPUs, by `--jaxpr-pallas-to-triton`. JAX: pallas_call_p.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import InferError, JaxprOp
from mjax.dialect.ops.transforms import module_signatures
from mjax.dialect.types import RefAval, ShapedArray, aval_of

SQUEEZED = -1   # block_shape entry of a squeezed dim (JAX's None / pl.squeezed)


def block_ref_shape(block_shape) -> tuple[int, ...]:
    """The kernel ref's shape for a block shape (squeezed dims dropped)."""
    return tuple(int(b) for b in block_shape if b != SQUEEZED)


def block_sizes(block_shape) -> tuple[int, ...]:
    """The block's extent per array dim (1 for a squeezed dim)."""
    return tuple(1 if b == SQUEEZED else int(b) for b in block_shape)


def element_padding(spec) -> tuple:
    """Per array dim of a spec: None for a blocked dim (the index map gives a block
    index), or the (low, high) virtual padding of an element dim (the index map gives
    an element offset into the padded array; JAX's pl.Element). A spec holding element
    dims says so with `element_padding = array<i64: lo0, hi0, lo1, hi1, ...>`, -1, -1
    for its blocked dims."""
    n = len(tuple(spec["block_shape"]))
    pads = tuple(spec.get("element_padding", None) or (-1,) * (2 * n))
    return tuple(None if lo < 0 else (int(lo), int(hi))
                 for lo, hi in zip(pads[::2], pads[1::2]))


_SPEC_KEYS = ({"block_shape", "index_map"}, {"block_shape", "index_map", "element_padding"})


def _spec_list(what: str, specs) -> list[dict]:
    specs = list(specs or ())
    for i, s in enumerate(specs):
        if (not isinstance(s, dict) or set(s) not in _SPEC_KEYS
                or not isinstance(s["index_map"], A.Symbol)):
            raise TypeError(f"{what}[{i}] must be a dictionary {{block_shape = array<i64: "
                            f"...>, index_map = @fn}} (and optionally element_padding = "
                            f"array<i64: ...>), got {s!r}")
        if not all(isinstance(b, int) for b in tuple(s["block_shape"])):
            raise TypeError(f"{what}[{i}] block_shape must be integers, got "
                            f"{s['block_shape']!r}")
        if "element_padding" in s:
            pads = tuple(s["element_padding"])
            bs = tuple(s["block_shape"])
            if (len(pads) != 2 * len(bs) or not all(isinstance(x, int) for x in pads)
                    or any((lo < 0) != (hi < 0) or (lo < 0 and (lo, hi) != (-1, -1))
                           or (lo >= 0 and b == SQUEEZED)
                           for lo, hi, b in zip(pads[::2], pads[1::2], bs))):
                raise TypeError(f"{what}[{i}] element_padding {pads} must hold a (low, "
                                f"high) pair of padding sizes >= 0 per element dim of "
                                f"block_shape {bs}, and -1, -1 per other dim")
    return specs


class PallasCallOp(JaxprOp, name="pallas_call"):
    """Runs kernel `callee` once per point of `grid` on blocks of the operands (inputs)
    and results (outputs). JAX: pallas_call_p."""

    num_operands = None
    pure = False   # the kernel may write its input refs; never CSE two calls
    attributes = {
        "callee": A.Sym(),
        "name": A.Str(default=None),
        "grid": A.Ints(default=()),
        "in_specs": A.AnyAttr(),
        "out_specs": A.AnyAttr(),
        "scratch_shapes": A.AnyAttr(default=()),
        "input_output_aliases": A.Ints(default=()),
        "interpret": A.Bool(default=False),
        "compiler_params": A.AnyAttr(default=None),
    }

    @classmethod
    def infer(cls, *avals, **params):
        raise InferError("'jaxpr.pallas_call' op declares its result types; build it with "
                         "emit_pallas_call")

    @classmethod
    def infer_at(cls, op: ir.Operation, avals, params):
        outs = [aval_of(r.type) for r in op.results]
        check_pallas_call(avals, outs, params, module_signatures(op))
        return tuple(outs)


def check_pallas_call(in_avals, out_avals, params, signature) -> None:
    """Checks operands/results against the specs, the kernel and the index maps
    (TypeError saying what does not fit)."""
    grid = tuple(params["grid"])
    if any(g < 0 for g in grid):
        raise TypeError(f"grid {grid} has a negative dimension")
    in_specs = _spec_list("in_specs", params["in_specs"])
    out_specs = _spec_list("out_specs", params["out_specs"])
    scratch = list(params["scratch_shapes"] or ())
    if len(in_specs) != len(in_avals):
        raise TypeError(f"has {len(in_avals)} operands but {len(in_specs)} in_specs")
    if len(out_specs) != len(out_avals):
        raise TypeError(f"has {len(out_avals)} results but {len(out_specs)} out_specs")
    for i, s in enumerate(scratch):
        if not isinstance(s, RefAval):
            raise TypeError(f"scratch_shapes[{i}] must be a memref type, got {s!r}")
    refs = []
    for what, specs, avals in (("input", in_specs, in_avals), ("output", out_specs, out_avals)):
        for i, (spec, aval) in enumerate(zip(specs, avals)):
            if isinstance(aval, RefAval):
                raise TypeError(f"{what} {i} is a ref ({aval.str_short()}); pallas_call "
                                f"takes and gives arrays")
            bs = tuple(spec["block_shape"])
            if len(bs) != aval.ndim:
                raise TypeError(f"{what} {i} block_shape {bs} must have one entry per "
                                f"dimension of {aval.str_short()}")
            if any(b < 1 and b != SQUEEZED for b in bs):
                raise TypeError(f"{what} {i} block_shape {bs} must hold positive sizes "
                                f"(or -1 for a squeezed dimension)")
            refs.append(RefAval(block_ref_shape(bs), aval.dtype))
            ins, outs = signature(spec["index_map"])
            want = [ShapedArray((), "int32")] * len(grid)
            if list(ins) != want:
                raise TypeError(f"{what} {i} index map @{spec['index_map']} takes "
                                f"{_fmt(ins)}, but a grid of rank {len(grid)} gives "
                                f"{_fmt(want)}")
            if list(outs) != [ShapedArray((), "int32")] * aval.ndim:
                raise TypeError(f"{what} {i} index map @{spec['index_map']} returns "
                                f"{_fmt(outs)}, expected {aval.ndim} i32 block indices "
                                f"(one per dimension of {aval.str_short()})")
    kin, kout = signature(params["callee"])
    want = refs + scratch
    if list(kin) != want or kout:
        raise TypeError(f"kernel @{params['callee']} has type {_fmt(kin)} -> {_fmt(kout)}, "
                        f"but the specs give {_fmt(want)} -> ()")
    aliases = tuple(params["input_output_aliases"] or ())
    if len(aliases) % 2:
        raise TypeError(f"input_output_aliases {aliases} must hold (input, output) pairs")
    for i, o in zip(aliases[::2], aliases[1::2]):
        if not (0 <= i < len(in_avals) and 0 <= o < len(out_avals)):
            raise TypeError(f"input_output_aliases pair ({i}, {o}) is out of range for "
                            f"{len(in_avals)} inputs and {len(out_avals)} outputs")
        if in_avals[i].strip_weak_type() != out_avals[o]:
            raise TypeError(f"input_output_aliases pair ({i}, {o}) aliases "
                            f"{in_avals[i].str_short()} with {out_avals[o].str_short()}; "
                            f"their types must be equal")


def _fmt(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def emit_pallas_call(b, operands, out_avals, **params) -> list[ir.Value]:
    """Builds a checked jaxpr.pallas_call with a Builder `b` (the kernel and index maps
    must exist in the module)."""
    params = PallasCallOp.check_params(params)
    avals = [aval_of(v.type) for v in operands]
    try:
        check_pallas_call(avals, list(out_avals), params, module_signatures(b.ip.block.owner))
    except TypeError as e:
        raise InferError(f"'jaxpr.pallas_call' op {e}") from None
    return list(PallasCallOp.create(operands, out_avals, params, loc=b.loc, ip=b.ip).results)


__all__ = ["PallasCallOp", "SQUEEZED", "block_ref_shape", "block_sizes", "check_pallas_call",
           "element_padding", "emit_pallas_call"]
