"""jax_explain_cache_misses: why a jit traces again, logged against the closest key it has
seen, in JAX's words: the call site, the function and where it is defined, then the
first kind of difference JAX would name (config context, input pytree, input types)."""
from __future__ import annotations

import inspect
import logging
import types

from mjax.config import config
from mjax.tracing.source_info import frame_position, in_mjax, user_frame
from mjax.base.tree_util import keystr

# (the logger jit's compilations use: 'mjax.api', as eager ops share)
logger = logging.getLogger("mjax.api")

_SEEN_CALLSITES: set = set()
_WEAK_TYPES_URL = "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"


def explain_cache_miss(fun, name, key, seen) -> None:
    """Logs why jit(fun) traces again for `key` = (input tree, avals, static arguments,
    config state, donation, mesh), against the closest of the keys `seen`."""
    code = getattr(inspect.unwrap(fun), "__code__", None)
    if code is not None and in_mjax(code.co_filename):
        return      # (mjax's own jitted functions, as JAX leaves out its internal ones)
    callsite = _callsite()
    where = "" if code is None else f" defined at {code.co_filename}:{code.co_firstlineno}"
    lines = [f"TRACING CACHE MISS at {callsite}:"]
    if not seen:
        lines.append(f"  never seen function:\n    {name} id={id(fun)}{where}")
        if callsite in _SEEN_CALLSITES:
            lines.append("  but seen another function defined on the same line; maybe the "
                         "function is\n  being re-defined repeatedly, preventing caching?")
        _SEEN_CALLSITES.add(callsite)
    else:
        names = arg_names(fun, key[0], key[2])
        closest = min(_differences(key, old, names) for old in seen)
        lines += [f"  for {name}{where}",
                  "  all previously seen cache keys differ. For the closest previous key:",
                  "  " + closest[-1]]
    logger.warning("\n".join(lines))


def _callsite() -> str:
    """The user's line calling the jit, as JAX summarizes it: file:line[:column] (function),
    the column counted from 0 and left out when 0."""
    frame = user_frame()
    if frame is None:
        return "unknown"
    line, col = frame_position(frame)
    at = f"{frame.f_code.co_filename}:{line}" + (f":{col}" if col else "")
    return f"{at} ({frame.f_code.co_name})"


def _differences(new, old, names) -> tuple:
    """(severity, count, text) of how key `new` differs from `old` (lower: closer), by
    the first kind that differs, in JAX's order."""
    new_tree, new_avals, new_static, new_state, new_donated, new_mesh = new
    old_tree, old_avals, old_static, old_state, old_donated, old_mesh = old
    if new_state != old_state:
        options = [o.name for o in config.options() if o.affects_tracing]
        diffs = [f"  * {n} differs: now {_value(v)} and before {_value(o)}"
                 for n, v, o in zip(options, new_state, old_state) if v != o]
        return (0, len(diffs), "Tracing context doesn't match, e.g. due to config or "
                               "context manager.\n" + "\n".join(diffs))
    tree = list(_tree_differences(new_tree, old_tree, ()))
    tree += _static_differences(new_static, old_static)
    if tree:
        return (1, len(tree), "different input pytree:\n" + "\n".join(
            f"  * at input path {keystr(p)}, now {a} and before {b}, so {why}"
            for p, a, b, why in tree))
    if new_avals != old_avals:
        return _type_differences(new_avals, old_avals, names)
    if new_donated != old_donated:
        return (2, 1, f"different donated arguments: now {new_donated} and before "
                      f"{old_donated}")
    if new_mesh != old_mesh:
        return (2, 1, f"different mesh in context: now {new_mesh} and before {old_mesh}")
    return (4, 0, "cache miss explanation unavailable")


def _value(v) -> str:
    return str(getattr(v, "value", v)) if not isinstance(v, str) else v


def _type_differences(new_avals, old_avals, names) -> tuple:
    diffs, weak_hint = [], False
    for i, (new, old) in enumerate(zip(new_avals, old_avals)):
        if new == old:
            continue
        a, b = new.str_short(), old.str_short()
        if new.weak_type != old.weak_type:
            weak_hint = True
            if new.ndim != old.ndim:       # (JAX shows the shardings then: none here)
                a, b = a + "({})", b + "({})"
            a, b = f"{a}{{weak_type={new.weak_type}}}", f"{b}{{weak_type={old.weak_type}}}"
        name = names[i] if i < len(names) else f"args[{i}]"
        diffs.append(f"  * at {name}, now {a} and before {b}")
    text = "different input types:\n" + "\n".join(diffs)
    return (3, len(diffs), text + (_WEAK_TYPES_URL if weak_hint else ""))


def _tree_differences(new, old, path):
    """(path, now, before, why) where two treedefs differ, as JAX's
    tree_util.equality_errors words it."""
    nd, od = new.node_data(), old.node_data()
    if nd is None and od is None:
        return
    now = "pytree leaf" if nd is None else str(nd[0])
    before = "pytree leaf" if od is None else str(od[0])
    if nd is None or od is None or nd[0] is not od[0]:
        yield path, now, before, "their Python types differ"
        return
    kind, new_children, old_children = nd[0], new.children(), old.children()
    if issubclass(kind, (list, tuple)) and len(new_children) != len(old_children):
        yield (path, f"{kind.__name__} of length {len(new_children)}",
               f"{kind.__name__} of length {len(old_children)}", "the lengths do not match")
        return
    if len(new_children) != len(old_children):
        why = "the numbers of children do not match"
        if issubclass(kind, dict):
            keys = set(nd[1] or ()) ^ set(od[1] or ())
            if keys:
                why += f", with the symmetric difference of key sets: {{{' '.join(map(repr, keys))}}}"

        def count(n):
            return f"{n} child{'ren' if n > 1 else ''}"
        yield (path, f"{kind} with {count(len(new_children))}",
               f"{kind} with {count(len(old_children))}", why)
        return
    if nd[1] != od[1]:
        yield (path, f"{kind} with pytree metadata {nd[1]}",
               f"{kind} with pytree metadata {od[1]}", "the pytree node metadata does not match")
        return
    for i, (a, b) in enumerate(zip(new_children, old_children)):
        yield from _tree_differences(a, b, path + (_ChildKey(kind, nd[1], i),))


class _ChildKey:
    """A child's position in its node, printed as JAX's key paths print it."""

    def __init__(self, kind, aux, index):
        self.kind, self.aux, self.index = kind, aux, index

    def __str__(self):
        if issubclass(kind := self.kind, dict) and isinstance(self.aux, (list, tuple)) \
                and self.index < len(self.aux):
            # (a dict's node data is its keys; a dict subclass registered with other
            # data, defaultdict's factory for one, is named by position below)
            return f"[{self.aux[self.index]!r}]"
        if issubclass(kind, tuple) and hasattr(kind, "_fields"):
            return f".{kind._fields[self.index]}"
        if issubclass(kind, (list, tuple)):
            return f"[{self.index}]"
        return f"[<flat index {self.index}>]"


def _static_differences(new, old) -> list:
    """Static arguments, which JAX keeps in the input pytree as Static nodes."""
    new, old = dict(new), dict(old)
    out = []
    for k in sorted(set(new) | set(old), key=str):
        if new.get(k, _MISSING) != old.get(k, _MISSING):
            path = (f"[0][{k}]" if isinstance(k, int) else f"[1][{k!r}]",)   # (keystr's)
            static = "<class 'jax._src.tree_util.Static'> with pytree metadata Static(val={})"
            out.append((path, static.format(new.get(k)), static.format(old.get(k)),
                        "the pytree node metadata does not match"))
    return out


_MISSING = object()


def describer(fun, name, tree, static_key):
    """How an error names argument leaf k of a call of `fun`: JAX's "x of f", "p['w'] of
    f" (the devices errors)."""
    def describe(k):
        names = arg_names(fun, tree, static_key)
        leaf = names[k] if k < len(names) else f"args[{k}]"
        return f"{leaf} of {getattr(fun, '__qualname__', name)}"
    return describe


def arg_names(fun, tree, static_key) -> list:
    """The name of each input leaf, as JAX's debug info names them: the parameter it is
    passed to, then its path inside that argument."""
    params = _positional_names(fun)
    static = {k for k, _ in static_key if isinstance(k, int)}
    dyn_params = [p for i, p in enumerate(params) if i not in static]
    names = []
    args_tree, kwargs_tree = tree.children()
    for i, child in enumerate(args_tree.children()):
        base = dyn_params[i] if i < len(dyn_params) else f"args[{i}]"
        names += _leaf_names(base, child, ())
    kw_keys = list(kwargs_tree.node_data()[1] or ())
    for key, child in zip(kw_keys, kwargs_tree.children()):
        names += _leaf_names(str(key), child, ())
    return names


def _positional_names(fun) -> list:
    """The names of fun's positional parameters (as inspect.signature lists them)."""
    code = getattr(fun, "__code__", None)
    if type(fun) is types.FunctionType and code is not None and \
            "__wrapped__" not in fun.__dict__ and "__signature__" not in fun.__dict__:
        # (a plain function's own: read from its code, ~20x cheaper than a signature)
        return list(code.co_varnames[:code.co_argcount])
    try:
        return [p.name for p in inspect.signature(fun).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def _leaf_names(base, tree, path) -> list:
    nd = tree.node_data()
    if nd is None:
        return [base + "".join(map(str, path))]
    out = []
    for i, child in enumerate(tree.children()):
        out += _leaf_names(base, child, path + (_ChildKey(nd[0], nd[1], i),))
    return out


__all__ = ["explain_cache_miss"]
