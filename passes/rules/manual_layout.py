"""Where a stacked operand or result of `jaxpr.manual_computation` came from, or goes to:
the global value the shard_map's in_spec (out_spec) split, for the region to take (give)
it as JAX's shard_map lowering does (passes/rules/manual.py).

The expansion of a shard_map (passes/rules/shard_map.py) turns a global value into its
stacked blocks by a reshape and a transpose between sharding constraints, and the
stacked results back by the inverse; a vmap around the shard_map adds transposes moving
its batch dim. Lowering a manual computation, this module follows those layout ops
(reshapes, transposes, constraints) back from an operand, or on from a result, and says
whether some value on the way is that global value: per dimension of the block, the
stacked mesh axes splitting it (major first) before the block's own extent. The region
then takes that value, sharded so, where before it took the stacked form's dims merged
into the first; the conversions it no longer needs become dead, and are erased once the
lowering pass has visited them (`erase_dead`).

The layout ops are followed on "atoms": each dim of the stacked value is one atom (of its
size, dims of size 1 none), a reshape regroups the atoms in order (an atom a new dim
boundary falls inside is split in two), a transpose permutes the dims' atom lists.
"""
from __future__ import annotations

from jaxlib.mlir import ir

_CONSTRAINTS = ("sdy.sharding_constraint", "jaxpr.sharding_constraint")
_TRANSPOSES = ("stablehlo.transpose", "jaxpr.transpose")
_RESHAPES = ("stablehlo.reshape", "jaxpr.reshape")
_SQUEEZES = ("jaxpr.squeeze", "jaxpr.expand_dims")
# (a vmap's broadcast of a result along a mesh axis it does not vary along, of which the
# shard_map keeps member 0's block: a slice of the broadcast dim to one member)
_BROADCASTS = ("stablehlo.broadcast_in_dim", "jaxpr.broadcast_in_dim")
_SLICES = ("stablehlo.slice", "jaxpr.slice")


def _static(t) -> tuple | None:
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return None
    return tuple(t.shape)


def kind(op) -> str | None:
    """What a layout op does to its operand 0: "same" (a sharding constraint), "transpose",
    "reshape", "broadcast", "slice"; None for any other op (or one not followed)."""
    op = op.operation
    name = op.name
    if len(op.results) != 1 or not len(op.operands) or _static(op.results[0].type) is None:
        return None
    if name in _CONSTRAINTS:
        attrs = op.attributes
        # (a constraint saying partial sums changes what the value means: not followed)
        if "unreduced" in attrs or "reduced" in attrs or "unreduced" in str(
                attrs["sharding"] if "sharding" in attrs else ""):
            return None
        return "same"
    if name == "stablehlo.custom_call":
        target = op.attributes["call_target_name"] if "call_target_name" in op.attributes \
            else None
        return "same" if target is not None and ir.StringAttr(target).value == "Sharding" \
            else None
    if name in _TRANSPOSES:
        return "transpose"
    if (name in _RESHAPES and "dimensions" not in op.attributes) or name in _SQUEEZES:
        return "reshape"
    if name in _BROADCASTS:
        return "broadcast"
    if name in _SLICES:
        return "slice"
    return None


def _ints(op, name) -> list[int] | None:
    return list(ir.DenseI64ArrayAttr(op.attributes[name])) if name in op.attributes else None


class _Atoms:
    """The atoms of a stacked value (`shape`): `parts[i]`, dim i's atoms (major first)."""

    def __init__(self, shape):
        self.size: dict[int, int] = {}
        self.broadcasts: set[int] = set()
        self.parts: list[list[int]] = []
        for n in shape:
            self.parts.append(self._new(n) if n != 1 else [])

    def _new(self, n) -> list[int]:
        a = len(self.size)
        self.size[a] = n
        return [a]

    def broadcast(self, n) -> list[int]:
        if n == 1:
            return []
        (a,) = self._new(n)
        self.broadcasts.add(a)
        return [a]

    def copy(self) -> "_Atoms":
        new = _Atoms(())
        new.size = dict(self.size)
        new.broadcasts = set(self.broadcasts)
        new.parts = [list(p) for p in self.parts]
        return new

    def _split(self, a, major, minor) -> tuple[int, int]:
        (hi,), (lo,) = self._new(major), self._new(minor)
        if a in self.broadcasts:
            self.broadcasts |= {hi, lo}
        for p in self.parts:
            if a in p:
                at = p.index(a)
                p[at:at + 1] = [hi, lo]
        return hi, lo

    def regroup(self, dims, shape) -> list[list[int]] | None:
        """`dims` (atom lists of a value) as the dims of its reshape to `shape`; None when
        the atoms cannot be grouped so."""
        flat = [a for d in dims for a in d]
        out, i = [], 0
        for n in shape:
            group, prod = [], 1
            while prod < n:
                if i >= len(flat):
                    return None
                a = flat[i]
                if prod * self.size[a] <= n:
                    group.append(a)
                    prod *= self.size[a]
                    i += 1
                    continue
                need = n // prod
                if n % prod or self.size[a] % need:
                    return None
                hi, lo = self._split(a, need, self.size[a] // need)
                flat[i] = lo
                group.append(hi)
                prod *= need
            if prod != n:
                return None
            out.append(group)
        return out if i == len(flat) else None

    def layout(self, dims, axes) -> tuple | None:
        """Whether `dims` is the global form of the stacked value whose first len(axes)
        dims are the mesh axes `axes`: per dim, the axes splitting it (major first) before
        its block's atoms; else None."""
        k = len(axes)
        stacked, block = self.parts[:k], self.parts[k:]
        if len(dims) != len(block) or any(not p for p in stacked):
            return None
        owner = {a: j for j, p in enumerate(stacked) for a in p}
        out, used = [], []
        for d, b in zip(dims, block):
            cut = len(d) - len(b)
            if cut < 0 or d[cut:] != b:
                return None
            names, i = [], 0
            while i < cut:
                j = owner.get(d[i])
                if j is None or d[i:i + len(stacked[j])] != stacked[j]:
                    return None
                names.append(axes[j])
                used.append(j)
                i += len(stacked[j])
            out.append(tuple(names))
        return tuple(out) if sorted(used) == list(range(k)) else None


def _moved(atoms: _Atoms, dims, op, backward: bool):
    """`dims` carried through layout op `op` (from its result to its operand when
    `backward`, else the other way); None where it cannot be."""
    op = op.operation
    step = kind(op)
    if step == "same":
        return dims
    if step == "transpose":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        if backward:
            out = [None] * len(perm)
            for i, p in enumerate(perm):
                out[p] = dims[i]
            return out
        return [dims[p] for p in perm]
    if step == "reshape":
        shape = _static((op.operands[0] if backward else op.results[0]).type)
        return None if shape is None else atoms.regroup(dims, shape)
    if backward:
        return None
    shape = _static(op.results[0].type)
    if step == "broadcast":
        where = _ints(op, "broadcast_dimensions") or []
        old = _static(op.operands[0].type)
        out = []
        for j, n in enumerate(shape):
            i = where.index(j) if j in where else None
            if i is not None and old[i] == n:
                out.append(dims[i])
            else:         # (a new member per index: an atom read by no layout)
                out.append(atoms.broadcast(n))
        return out
    start, limit = _ints(op, "start_indices"), _ints(op, "limit_indices")
    strides = _ints(op, "strides") or [1] * len(shape)
    old = _static(op.operands[0].type)
    out = []
    for d, (a, b, st, n) in enumerate(zip(start, limit, strides, old)):
        if (a, b, st) == (0, n, 1):
            out.append(dims[d])
        elif b - a == 1 and all(x in atoms.broadcasts for x in dims[d]):
            out.append([])       # (one member of a broadcast: the value itself)
        else:
            return None
    return out


def source(x: ir.Value, axes, block_rank: int, passes):
    """(the global value, its per-dim mesh axes) that the stacked operand `x` (its first
    len(axes) dims the mesh axes `axes`) was made from by layout ops, else None: the
    farthest back of one layout, not past a global value that `passes(value, layout)`
    says no to (a constraint saying another layout than the region's)."""
    shape = _static(x.type)
    if not axes or not block_rank or shape is None:
        return None
    atoms = _Atoms(shape)
    dims, v, best = [list(p) for p in atoms.parts], x, None
    while isinstance(v, ir.OpResult):
        op = v.owner
        if kind(op) is None:
            break
        dims = _moved(atoms, dims, op, backward=True)
        if dims is None:
            break
        v = op.operation.operands[0]
        if len(dims) == block_rank:
            found = atoms.layout(dims, tuple(axes))
            if found is not None:
                if best is not None and found != best[1]:
                    break
                best = (v, found)
                if not passes(v, found):
                    break
    return best


def targets(r: ir.Value, axes, block_rank: int, block) -> list[tuple]:
    """The values of `block`'s ops that layout ops make from the stacked result `r` (its
    first len(axes) dims the mesh axes `axes`) and that are its global form: [(value,
    per-dim mesh axes)], the nearest on each path of uses."""
    shape = _static(r.type)
    if not axes or not block_rank or shape is None:
        return []
    found = []
    start = _Atoms(shape)
    todo = [(r, start, [list(p) for p in start.parts])]
    while todo:
        v, atoms, dims = todo.pop()
        for use in v.uses:
            op = use.owner.operation
            if op.block != block or kind(op) is None or use.operand_number != 0:
                continue
            mine = atoms.copy()
            # (the copy names the same atoms: it may split them for this path alone)
            moved = _moved(mine, [list(d) for d in dims], op, backward=False)
            if moved is None:
                continue
            out = op.results[0]
            layout = mine.layout(moved, tuple(axes)) if len(moved) == block_rank else None
            if layout is not None:
                found.append((out, layout))
            else:
                todo.append((out, mine, moved))
    return found


def erase_dead(values) -> None:
    """Erases the layout ops made dead around `values`: those following from them by uses
    and those they follow from, users first (a constraint is no pure op: canonicalize
    would keep it)."""
    ops, seen = [], set()

    def add(op):
        op = op.operation      # (handles of one op differ but hash and compare equal)
        if op not in seen and kind(op) is not None:
            seen.add(op)
            ops.append(op)
            return True
        return False
    for v in values:
        todo = [v]
        while todo:             # (on, by uses)
            for use in todo.pop().uses:
                if add(use.owner):
                    todo.append(use.owner.operation.results[0])
        while isinstance(v, ir.OpResult) and add(v.owner):    # (back, by operands)
            v = v.owner.operation.operands[0]
    changed = True
    while changed:
        changed, left = False, []
        for op in ops:
            if any(True for r in op.results for _ in r.uses):
                left.append(op)
            else:
                op.erase()
                changed = True
        ops = left


__all__ = ["erase_dead", "kind", "source", "targets"]
