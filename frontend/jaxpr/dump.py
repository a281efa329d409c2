"""jax_dump_ir_modes' jaxpr dumps: what a jit compiles, written before it is lowered,
as JAX writes them (`jax_000002_f.jaxpr.txt`, `.jaxpr.html`, `.eqn_count_pprof`, numbered
in compile order) to jax_dump_ir_to's directory (runtime/ir_dump.py writes the StableHLO).

The equation-count profile is a gzipped pprof protocol buffer (`pprof -http=: FILE`): one
sample per (source line, primitive) with the number of equations traced there. JAX's
samples carry the whole Python stack of each equation; an mjax op keeps the user's line
only, so each sample's stack is that one frame."""
from __future__ import annotations

import collections
import gzip
import html
import itertools
import json
import logging
import re

from jaxlib import _jax

from mjax.config import config
from mjax.passes.ir_util import nested_ops
from mjax.runtime import ir_dump
from mjax.tracing.source_info import FUNCTION_AT
from mjax.jit.stages import ClosedJaxpr
from mjax.tracing.staging import TracedFunction

_ids = itertools.count()
_JAXPR_MODES = ("jaxpr", "jaxpr_html", "eqn_count_pprof")
# (ops a jaxpr shows as no equation: functions, terminators, literals)
_NOT_EQUATIONS = ("func.", "jaxpr.yield", "jaxpr.constant", "mjax.")
_FILE_LINE = re.compile(r'"([^"]*)":(\d+):(\d+)')


def maybe_dump(traced: TracedFunction, fun_name: str) -> None:
    """Writes the jaxpr files jax_dump_ir_modes asks for, of a trace jit is about to
    lower (nothing when dumping is off)."""
    modes = ir_dump.modes()
    if not any(m in modes for m in _JAXPR_MODES):
        return
    out = ir_dump.dump_dir()
    if out is None:
        return
    n = next(_ids)
    base = out / f"jax_{n:06d}_{fun_name}"
    text = str(ClosedJaxpr(traced).jaxpr)
    # (JAX logs these through the root logger, which sets up logging's default handler)
    if "jaxpr" in modes:
        logging.log(logging.INFO, "Dumping jaxpr for %s to %s.", fun_name, out)
        base.with_name(base.name + ".jaxpr.txt").write_text(text)
    if "jaxpr_html" in modes:
        logging.log(logging.INFO, "Dumping jaxpr HTML for %s to %s.", fun_name, out)
        base.with_name(base.name + ".jaxpr.html").write_text(
            f"<html><body><pre>{html.escape(text)}</pre></body></html>\n")
    if "eqn_count_pprof" in modes:
        logging.log(logging.INFO, "Dumping eqn count pprof for %s to %s.", fun_name, out)
        base.with_name(base.name + ".eqn_count_pprof").write_bytes(
            equation_profile(traced, fun_name))


def equation_profile(traced: TracedFunction, fun_name: str) -> bytes:
    """The gzipped pprof profile of how many equations each source line traced, per
    primitive (the functions a call names are counted where they are defined)."""
    counts: collections.Counter = collections.Counter()
    for op in nested_ops(traced.module):
        name = op.name
        if name.startswith(_NOT_EQUATIONS) or "mjax.implicit_broadcast" in op.attributes:
            continue      # (the printed jaxpr shows no equation for these either)
        m = _FILE_LINE.search(str(op.location))
        where = (m.group(1), int(m.group(2)), int(m.group(3))) if m else None
        counts[(where, name.split(".", 1)[-1])] += 1
    strings: dict = collections.defaultdict(itertools.count().__next__)
    strings[""]                  # (id 0: the empty string, as pprof requires)
    primitive = strings["primitive"]
    functions: dict = {}
    locations: dict = {}
    samples = []
    for (where, prim), count in counts.items():
        frames = []
        if where is not None:
            path, line, col = where
            qualname = FUNCTION_AT.get(where, "<unknown>")
            fn = functions.setdefault((path, qualname), len(functions) + 1)
            frames = [locations.setdefault((fn, line), len(locations) + 1)]
        samples.append({"location_id": frames, "value": [count],
                        "label": [{"key": primitive, "str": strings[prim]}]})
    profile = {
        "location": [{"id": i, "line": [{"function_id": fn, "line": line}]}
                     for (fn, line), i in locations.items()],
        "function": [{"id": i, "name": strings[_function_name(path, qualname)],
                      "filename": strings[_canonical(path)], "start_line": 0}
                     for (path, qualname), i in functions.items()],
        "sample": samples,
    }
    profile["sample_type"] = [{"type": strings["equations"], "unit": strings["count"]}]
    profile["comment"] = strings[fun_name]
    profile["string_table"] = list(strings)
    return gzip.compress(_jax.json_to_pprof_profile(json.dumps(profile)))


def _canonical(path: str) -> str:
    pattern = config.read("jax_hlo_source_file_canonicalization_regex")
    return re.sub(pattern, "", path) if pattern else path


def _function_name(path: str, qualname: str) -> str:
    """JAX's name of a profiled function: its file's dotted path, then its qualname."""
    return f"{_canonical(path).removesuffix('.py').replace('/', '.')}.{qualname}"


__all__ = ["equation_profile", "maybe_dump"]
