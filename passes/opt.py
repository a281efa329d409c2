"""`mjax-opt`: read `jaxpr`/StableHLO IR, run passes, print the result (like `mlir-opt`).

    mjax-opt model.mlir --jaxpr-verify --jaxpr-to-stablehlo --canonicalize
    mjax-opt - --pass-pipeline='builtin.module(jaxpr-to-stablehlo,cse)' -o out.mlir
    mjax-opt tests.mlir --split-input-file --verify-diagnostics
    mjax-opt model.mlir --load-pass-plugin=my_passes.py --my-pass   # users' passes

Bad input is reported as `file:line:col: error: message` with exit status 1; an internal
failure says so (exit status 2) without a Python traceback.
"""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from dataclasses import dataclass

from jaxlib.mlir import ir, passmanager

import mjax.passes  # noqa: F401  (registers every pass)
from mjax.dialect.context import context
from mjax.passes.jaxpr_verify import verify_module
from mjax.passes.plugins import PluginError, load_pass_plugin, plugin_failure
from mjax.passes.rules import xla_metadata
from mjax.passes.registry import (PASSES, PassError, format_location, make_pass,
                                  parse_pipeline, run_pipeline)

_SPLIT = re.compile(r"^// -----.*$", re.M)


@dataclass
class Diagnostic:
    line: int | None
    col: int | None
    severity: str  # "error" | "warning" | "note"
    message: str

    def format(self, filename: str) -> str:
        where = filename if self.line is None else f"{filename}:{self.line}:{self.col}"
        return f"{where}: {self.severity}: {self.message}"


def _diag_from_location(loc, severity, message) -> Diagnostic:
    text = format_location(loc, "-")
    m = re.fullmatch(r".*:(\d+):(\d+)", text)
    if m:
        return Diagnostic(int(m.group(1)), int(m.group(2)), severity, message)
    return Diagnostic(None, None, severity, message)


def _mlir_error_diags(e: ir.MLIRError) -> list[Diagnostic]:
    diags = []
    for d in e.error_diagnostics or []:
        diags.append(_diag_from_location(d.location, "error", d.message))
        for note in d.notes:
            diags.append(_diag_from_location(note.location, "note", note.message))
    if not diags:
        diags.append(Diagnostic(None, None, "error", str(e)))
    return diags


def process_chunk(text: str, pipeline: list, *, verify_each: bool = True,
                  print_after_all=None, debug_info: bool = False
                  ) -> tuple[str | None, list[Diagnostic]]:
    """Parses, verifies and transforms one chunk; returns (output IR or None, diagnostics).

    As mlir-opt does, the input is verified first (always: no pass ever sees IR the
    verifier rejects) and, unless `verify_each` is off, the IR again after every pass;
    `print_after_all(name, module)` sees the passes asked for, not these checks.
    """
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            return None, _mlir_error_diags(e)
        if xla_metadata.ATTR in text:   # (tagged locations: lowering looks for them)
            xla_metadata.USED[0] = True
        step = None
        try:
            verify_module(module)
            for step in pipeline:
                run_pipeline(module, [step], after_each=print_after_all)
                if verify_each:
                    _verify_after(module, step[0])
            if not verify_each:
                module.operation.verify()
        except PassError as e:
            return None, [_diag_from_location(e.location, "error", e.message)]
        except ir.MLIRError as e:
            return None, _mlir_error_diags(e)
        except ValueError as e:
            return None, [Diagnostic(None, None, "error", str(e))]
        except NotImplementedError as e:     # valid IR a rule does not support (yet)
            return None, [Diagnostic(None, None, "error", f"not implemented: {e}")]
        except Exception as e:  # noqa: BLE001 - a plugin's bug is the user's, not ours
            cls = PASSES.get(step[0]) if step is not None else None
            failure = plugin_failure(cls, e) if cls is not None else None
            if failure is None:
                raise
            return None, [Diagnostic(None, None, "error", failure)]
        return module.operation.get_asm(enable_debug_info=debug_info), []


def _verify_after(module: ir.Module, name: str) -> None:
    """verify_module, its errors saying which pass left the IR invalid."""
    try:
        verify_module(module)
    except PassError as e:
        raise PassError(e.location, f"IR invalid after --{name}: {e.message}") from None
    except ir.MLIRError as e:
        first = (e.error_diagnostics or [None])[0]
        if first is None:
            raise PassError(None, f"IR invalid after --{name}: {e}") from None
        raise PassError(first.location, f"IR invalid after --{name}: {first.message}"
                        ) from None


# ---- --verify-diagnostics ------------------------------------------------------
_EXPECTED = re.compile(
    r"//\s*expected-(error|warning|note|remark)\s*(@[+-]?\d+|@above|@below)?\s*\{\{(.*?)\}\}")


def _expected_diagnostics(text: str, first_line: int) -> list[Diagnostic]:
    out = []
    for i, line in enumerate(text.splitlines()):
        lineno = first_line + i
        for m in _EXPECTED.finditer(line):
            where = m.group(2)
            target = lineno
            if where in ("@above",):
                target = lineno - 1
            elif where in ("@below",):
                target = lineno + 1
            elif where:
                target = lineno + int(where[1:])
            out.append(Diagnostic(target, None, m.group(1), m.group(3)))
    return out


def check_expected(found: list[Diagnostic], expected: list[Diagnostic], filename: str) -> list[str]:
    """mlir-opt's --verify-diagnostics: every expected diagnostic appears, nothing else."""
    problems = []
    unmatched = [d for d in found if d.severity != "note"]
    for exp in expected:
        hit = next((d for d in unmatched if d.line == exp.line and d.severity == exp.severity
                    and exp.message in d.message), None)
        if hit is None:
            problems.append(f"{filename}:{exp.line}: error: expected {exp.severity} "
                            f"\"{exp.message}\" was not produced")
        else:
            unmatched.remove(hit)
    for d in unmatched:
        problems.append(d.format(filename).replace(f": {d.severity}: ",
                                                  f": error: unexpected {d.severity}: ", 1))
    return problems


# ---- command line --------------------------------------------------------------
class _UsageError(Exception):
    """Bad command line (argparse would exit with status 2 and a usage dump)."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def _build_parser() -> argparse.ArgumentParser:
    ours = sorted((f, c) for f, c in PASSES.items() if c.__module__.startswith("mjax."))
    theirs = sorted((f, c) for f, c in PASSES.items() if not c.__module__.startswith("mjax."))
    lines = [f"  --{flag:<32} {cls.summary}" for flag, cls in ours]
    epilog = "mjax passes:\n" + "\n".join(lines)
    if theirs:
        epilog += "\n\nplugin passes (--load-pass-plugin):\n" + "\n".join(
            f"  --{flag:<32} {cls.summary}{_options_text(cls)}" for flag, cls in theirs)
    epilog += ("\n\nAny other --<name> runs the upstream MLIR pass of that name "
               "(canonicalize, cse, inline, symbol-dce, ...).")
    p = _ArgumentParser(
        prog="mjax-opt", description="Read jaxpr-dialect IR, run passes, print the result.",
        epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", nargs="?", default="-", help="input file, or - for stdin")
    p.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    p.add_argument("--pass-pipeline", default=None,
                   help="textual pipeline, e.g. 'builtin.module(jaxpr-to-stablehlo,cse)'")
    p.add_argument("--split-input-file", action="store_true",
                   help="process chunks separated by '// -----' independently")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check '// expected-error {{...}}' annotations against diagnostics")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="print the IR to stderr after every pass")
    p.add_argument("--no-verify-each", action="store_true",
                   help="do not run jaxpr-verify after every pass (the input is "
                        "always verified)")
    p.add_argument("--mlir-print-debuginfo", action="store_true",
                   help="print each op's location (as mlir-opt's flag of that name)")
    p.add_argument("--load-pass-plugin", action="append", default=[], metavar="FILE",
                   help="load the passes a Python file registers (@register_pass) as "
                        "flags (repeatable; docs/passes.md)")
    return p


def _options_text(cls) -> str:
    """` (options: min-size=int, ...)` of a dataclass pass."""
    if not dataclasses.is_dataclass(cls):
        return ""
    fields = [f for f in dataclasses.fields(cls) if f.init]
    if not fields:
        return ""
    return " (options: " + ", ".join(
        f"{f.name.replace('_', '-')}={getattr(f.type, '__name__', f.type)}"
        for f in fields) + ")"


def load_plugins(argv: list[str]) -> None:
    """Loads every --load-pass-plugin=FILE of argv first, so that its passes are flags
    (and listed by --help) when the command line is parsed."""
    paths, it = [], iter(argv)
    for arg in it:
        if arg == "--load-pass-plugin":
            paths.append(next(it, ""))
        elif arg.startswith("--load-pass-plugin="):
            paths.append(arg.split("=", 1)[1])
    for path in paths:
        if not path:
            raise _UsageError("--load-pass-plugin needs a file")
        load_pass_plugin(path)


def _pipeline_from_flags(unknown: list[str]) -> list[tuple[str, str]]:
    steps = []
    for arg in unknown:
        m = re.fullmatch(r"--([\w.\-]+)(?:=(.*))?", arg, re.S)
        if not m:
            raise _UsageError(f"unrecognized argument '{arg}'")
        value = (m.group(2) or "").strip().strip('"').strip("'")
        steps.append((m.group(1), value))
    return steps


def check_pipeline(steps: list[tuple[str, str]]) -> None:
    """Raises _UsageError naming the first unknown pass or bad pass option."""
    for name, options in steps:
        if name in PASSES:
            try:
                make_pass(name, options)
            except (ValueError, TypeError) as e:
                raise _UsageError(str(e)) from None
            continue
        spec = f"{name}{{{options}}}" if options else name
        try:
            passmanager.PassManager.parse(f"builtin.module({spec})", context())
        except (ValueError, ir.MLIRError) as e:
            if "does not refer to a registered pass" in str(e):
                raise _UsageError(f"unknown pass '{name}' (mjax-opt --help lists the passes)"
                                  ) from None
            detail = str(e).strip().splitlines()
            detail = next((l for l in detail if "error:" in l), detail[0] if detail else "")
            raise _UsageError(f"invalid options '{options}' for pass '{name}': "
                              f"{detail.split('error:', 1)[-1].strip()}") from None


def _read_input(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def run(argv: list[str]) -> int:
    """The whole driver; returns the exit status (0 ok, 1 bad input or failed checks)."""
    try:
        load_plugins(argv)
    except PluginError as e:
        print(e, file=sys.stderr)
        return 1
    except _UsageError as e:
        print(f"mjax-opt: error: {e}", file=sys.stderr)
        return 1
    parser = _build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        steps = _pipeline_from_flags(unknown)
        if args.pass_pipeline:
            try:
                steps = parse_pipeline(args.pass_pipeline) + steps
            except ValueError as e:
                raise _UsageError(str(e)) from None
        check_pipeline(steps)
    except _UsageError as e:
        print(f"mjax-opt: error: {e}", file=sys.stderr)
        return 1
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        text = _read_input(args.input)
    except OSError as e:
        print(f"mjax-opt: error: cannot read {args.input}: {e.strerror}", file=sys.stderr)
        return 1
    except UnicodeDecodeError as e:
        print(f"mjax-opt: error: {filename} is not UTF-8 text ({e.reason} at byte "
              f"{e.start})", file=sys.stderr)
        return 1

    chunks = [(text, 1)]
    if args.split_input_file:
        chunks, start = [], 0
        for m in _SPLIT.finditer(text):
            chunks.append(text[start:m.start()])
            start = m.end()
        chunks.append(text[start:])
        # Pad each chunk with newlines so diagnostics keep the file's line numbers.
        offset, padded = 1, []
        for c in chunks:
            padded.append(("\n" * (offset - 1) + c, offset))
            offset += c.count("\n")
        chunks = padded

    def print_after(name, module):
        print(f"// -----// IR Dump After {name} //----- //\n{module}", file=sys.stderr)

    outputs, failed = [], False
    for chunk, first_line in chunks:
        out, diags = process_chunk(chunk, steps, verify_each=not args.no_verify_each,
                                   print_after_all=print_after if args.print_ir_after_all
                                   else None, debug_info=args.mlir_print_debuginfo)
        if args.verify_diagnostics:
            problems = check_expected(diags, _expected_diagnostics(chunk, 1),
                                      filename)
            for p in problems:
                print(p, file=sys.stderr)
            failed |= bool(problems)
        else:
            for d in diags:
                print(d.format(filename), file=sys.stderr)
            failed |= any(d.severity == "error" for d in diags)
        if out is not None:
            outputs.append(out)
    result = "// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        try:
            with open(args.output, "w") as f:
                f.write(result)
        except OSError as e:
            print(f"mjax-opt: error: cannot write {args.output}: {e.strerror}",
                  file=sys.stderr)
            return 1
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        code = run(argv)
    except KeyboardInterrupt:
        code = 130
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            code = 1
        else:
            code = e.code or 0
    except Exception as e:  # a bug in mjax, not in the input: say so, without a traceback
        print(f"mjax-opt: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        code = 2
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":
    main()
