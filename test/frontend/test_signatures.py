"""mjax's public signatures equal JAX 0.10.2's: parameter names, kinds, defaults.

Users call mjax exactly as they call JAX, keywords included, so every public callable
that exists in both is compared with `inspect.signature(..., follow_wrapped=True)`. A
mismatch kept on purpose is listed in ALLOWED with its reason.
"""
import enum
import importlib
import inspect
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import jax
import mjax

# (jax module, mjax module) pairs: every public JAX module (docs/gen_api_coverage.py's
# list, the one list of JAX's API); a module missing on either side is skipped.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "docs"))
try:
    import gen_api_coverage
finally:
    sys.path.pop(0)
ALL_MODULES = ["" if m == "jax" else m[len("jax."):] for m in gen_api_coverage.jax_modules()[0]]
# Modules whose import loads TensorFlow: compared in a child process of their own
# (test_tensorflow_modules_in_a_child_process), so that TensorFlow never shares a test
# worker with jaxlib's compiles (issue 26.3: the two in one process crashed workers).
_LOADS_TENSORFLOW = ("experimental.jax2tf", "tools.jax_to_ir")
_ONLY_TF = os.environ.get("MJAX_SIGNATURES_TF") == "1"


def _loads_tensorflow(sub):
    return any(sub == m or sub.startswith(m + ".") for m in _LOADS_TENSORFLOW)


MODULES = [m for m in ALL_MODULES if _loads_tensorflow(m) == _ONLY_TF]

# Found when the comparison grew to every JAX module (issue 21.1), each to fix next:
# keeping them listed (the test refuses an entry that matches) makes each fix visible.
_NEW_MODULES = "found by the whole-API comparison (issue 21.1); not fixed yet"

# "module:name" -> why the signatures differ on purpose.
ALLOWED = {
    "distributed:initialize": _NEW_MODULES,
    "experimental.checkify:checkify": _NEW_MODULES,
    "experimental.jax2tf:dtype_of_val": _NEW_MODULES,
    "experimental.pallas:align_to": _NEW_MODULES,
    "experimental.pallas:when": _NEW_MODULES,
    "profiler:annotate_function": _NEW_MODULES,

    "numpy:array": "JAX's extra *args only exists to reject old positional arguments",
    "numpy:set_printoptions": "JAX's is a (*args, **kwargs) forwarder to NumPy's; mjax "
                              "shows NumPy's own parameters",
    "lax:random_gamma_grad": "JAX's is a generic (*args) shim over (a, x)",
    "jax:vmap": "frontend/vmap/batching.py: sum_match (a shard_map-era option) not implemented",
    "debug:visualize_array_sharding": "frontend/callbacks/debug.py (another engineer's): JAX "
                                      "forwards **kwargs to rich; mjax names the options",
}


def _import(prefix, sub):
    name = prefix + ("." + sub if sub else "")
    had = "tensorflow" in sys.modules
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    if not had and "tensorflow" in sys.modules and not _ONLY_TF:
        # (at collection, before conftest's per-test guard can see it)
        raise RuntimeError(f"importing {name} loaded TensorFlow into a test worker: list "
                           f"it in _LOADS_TENSORFLOW (compared in a child process)")
    return module


def _public_pairs():
    for sub in MODULES:
        jmod, mmod = _import("jax", sub), _import("mjax", sub)
        if jmod is None or mmod is None:
            continue
        for name in sorted(dir(jmod)):
            if name.startswith("_"):
                continue
            jf, mf = getattr(jmod, name), getattr(mmod, name, None)
            if mf is None or not callable(jf) or not callable(mf):
                continue
            if inspect.ismodule(jf):
                continue
            if inspect.isclass(jf) and (sub != "sharding" or not inspect.isclass(mf)):
                continue  # classes: only jax.sharding's constructors are compared
            yield f"{sub or 'jax'}:{name}", jf, mf


def _signature(f):
    try:
        return inspect.signature(f, follow_wrapped=True)
    except (ValueError, TypeError):
        return None


_SIMPLE = (type(None), bool, int, float, complex, str)


def _comparable(v):
    if isinstance(v, _SIMPLE):
        return True
    if isinstance(v, (tuple, list)):
        return all(_comparable(x) for x in v)
    return False


def _same_default(a, b):
    """Equal defaults where JAX's is a plain value, a dtype or an enum member; a JAX
    sentinel object (JAX's "unspecified") admits any mjax default."""
    empty = inspect.Parameter.empty
    if a is empty or b is empty:
        return a is b
    if isinstance(a, enum.Enum) or isinstance(b, enum.Enum):
        return (getattr(a, "name", None), getattr(a, "value", -1)) == (
            getattr(b, "name", None), getattr(b, "value", -2))
    if isinstance(a, (type, np.dtype)) and not _comparable(a):
        try:
            return np.dtype(a) == np.dtype(b)
        except TypeError:
            return False
    if _comparable(a):
        if isinstance(a, (tuple, list)):
            return isinstance(b, (tuple, list)) and tuple(a) == tuple(b)
        return type(a) is type(b) and a == b
    if isinstance(a, (frozenset, set)):
        return isinstance(b, (frozenset, set)) and set(a) == set(b)
    return True  # a JAX sentinel or object default: not comparable


def signature_mismatches(jf, mf):
    """The differences between JAX's and mjax's signatures, as readable strings."""
    js, ms = _signature(jf), _signature(mf)
    if js is None or ms is None:
        return [] if js is None else ["mjax signature unavailable"]
    P = inspect.Parameter
    jp, mp = list(js.parameters.values()), list(ms.parameters.values())
    m_var_kw = any(p.kind is P.VAR_KEYWORD for p in mp)
    m_var_pos = any(p.kind is P.VAR_POSITIONAL for p in mp)
    out = []
    mby = {p.name: p for p in mp}
    # A positional-only parameter's name is invisible to callers: such parameters pair by
    # position (mjax may call jnp.equal's operands x1, x2 where JAX says x, y).
    renamed = set()
    for i, p in enumerate(jp):
        if (p.kind is P.POSITIONAL_ONLY and i < len(mp) and mp[i].kind is P.POSITIONAL_ONLY
                and p.name not in mby):
            mby[p.name] = mp[i]
            renamed.add(mp[i].name)
    for i, p in enumerate(jp):
        if p.name.startswith("_"):
            continue  # JAX-internal hooks (e.g. einsum's _dot_general)
        q = mby.get(p.name)
        if p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            if q is None or q.kind is not p.kind:
                out.append(f"JAX has {p}, mjax not")
            continue
        if q is None:
            if p.kind is P.POSITIONAL_ONLY and i < len(mp) and (
                    mp[i].kind is P.POSITIONAL_ONLY):
                out.append(f"positional-only #{i}: JAX {p.name!r}, mjax {mp[i].name!r}")
            elif p.kind is P.KEYWORD_ONLY and m_var_kw:
                pass  # **kwargs takes it
            elif p.kind is P.POSITIONAL_OR_KEYWORD and m_var_kw and m_var_pos:
                pass
            else:
                out.append(f"mjax lacks parameter {p.name!r} ({p.kind.description})")
            continue
        if q.kind is not p.kind:
            out.append(f"{p.name!r}: JAX {p.kind.description}, mjax {q.kind.description}")
        elif p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD) and [
                x.name for x in mp].index(q.name) != i:
            out.append(f"{p.name!r}: JAX position {i}, mjax {mp.index(q)}")
        if not _same_default(p.default, q.default):
            out.append(f"{p.name!r}: JAX default {p.default!r}, mjax {q.default!r}")
    jnames = {p.name for p in jp}
    j_var_kw = any(p.kind is P.VAR_KEYWORD for p in jp)
    for q in mp:
        if q.name in jnames or q.name in renamed or q.kind in (P.VAR_POSITIONAL,
                                                                P.VAR_KEYWORD):
            continue
        if q.default is P.empty:
            out.append(f"mjax requires extra parameter {q.name!r}")
        elif q.kind is not P.KEYWORD_ONLY and not j_var_kw:
            out.append(f"mjax has extra positional parameter {q.name!r}")
    return out


PAIRS = list(_public_pairs())


@pytest.mark.skipif(_ONLY_TF, reason="(this is the child process)")
def test_tensorflow_modules_in_a_child_process():
    assert any(_loads_tensorflow(m) for m in ALL_MODULES)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
         __file__, "-k", "test_signature_matches_jax"],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "MJAX_SIGNATURES_TF": "1", "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout


@pytest.mark.skipif(_ONLY_TF, reason="(the child compares only TensorFlow's modules)")
def test_pairs_found():
    # Guards against an import failure silently emptying the comparison.
    assert len(PAIRS) > 800
    subs = {key.split(":")[0] for key, _, _ in PAIRS}
    for s in ("numpy", "lax", "nn", "random", "scipy.special", "tree_util", "jax"):
        assert s in subs


@pytest.mark.parametrize("key,jf,mf", PAIRS, ids=[k for k, _, _ in PAIRS])
def test_signature_matches_jax(key, jf, mf):
    bad = signature_mismatches(jf, mf)
    if key in ALLOWED:
        assert bad, f"{key} is allowlisted ({ALLOWED[key]}) but matches now: remove it"
        return
    assert not bad, f"{key}: " + "; ".join(bad)


def test_checker_sees_differences():
    def j(x, /, y, *, z=1): ...
    def m1(x, /, y, *, z=2): ...
    def m2(x, /, operand, *, z=1): ...
    def m6(operand, /, y, *, z=1): ...
    def m3(x, /, y, z=1): ...
    def m4(x, /, y, **kw): ...
    def m5(x, /, y, *, z=1, w): ...
    assert signature_mismatches(j, j) == []
    assert signature_mismatches(j, m1)
    assert signature_mismatches(j, m2)
    assert signature_mismatches(j, m3)
    assert signature_mismatches(j, m4) == []
    assert signature_mismatches(j, m5)
    assert signature_mismatches(j, m6) == []  # positional-only names are invisible
