"""`mjax-opt` driver behaviour: inputs and outputs, pass flags and pipelines,
--split-input-file, --verify-diagnostics, --print-ir-after-all, --help, and errors
(`file:line:col: error: ...` or `mjax-opt: error: ...`, exit 1, never a traceback)."""
from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import textwrap

import pytest
from jaxlib.mlir import ir

from mjax.dialect.ops import elementwise as E
from mjax.dialect.types import ShapedArray, tensor_type
from mjax.passes import PASSES, opt
from mjax.passes.rules import LOWER

SIN = textwrap.dedent("""\
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }
    """)


def run_opt(args, stdin: str = "") -> tuple[int, str, str]:
    """Runs the driver in-process; returns (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = opt.run([str(a) for a in args])
    finally:
        sys.stdin = old_stdin
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def sin_file(tmp_path):
    path = tmp_path / "sin.mlir"
    path.write_text(SIN)
    return path


# ---- input and output ------------------------------------------------------------------
def test_reads_file_and_prints_module(sin_file):
    code, out, err = run_opt([sin_file])
    assert (code, err) == (0, "")
    assert '"jaxpr.sin"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>' in out
    assert out.lstrip().startswith("module {")


@pytest.mark.parametrize("args", [["-"], []], ids=["dash", "default"])
def test_reads_stdin(args):
    code, out, err = run_opt(args + ["--jaxpr-to-stablehlo"], stdin=SIN)
    assert (code, err) == (0, "")
    assert "stablehlo.sine %arg0" in out


def test_output_file(sin_file, tmp_path):
    dest = tmp_path / "out.mlir"
    code, out, err = run_opt([sin_file, "--jaxpr-to-stablehlo", "-o", dest])
    assert (code, out, err) == (0, "", "")
    assert "stablehlo.sine" in dest.read_text()


def test_output_file_unwritable(sin_file, tmp_path):
    code, out, err = run_opt([sin_file, "-o", tmp_path / "missing-dir" / "out.mlir"])
    assert code == 1
    assert err.startswith("mjax-opt: error: cannot write")


# ---- passes ----------------------------------------------------------------------------
def test_pass_flags_run_in_order(sin_file):
    code, out, _ = run_opt([sin_file, "--jaxpr-verify", "--jaxpr-to-stablehlo"])
    assert code == 0 and "stablehlo.sine" in out and "jaxpr." not in out


def test_pass_option(sin_file):
    code, out, _ = run_opt([sin_file, "--jaxpr-to-stablehlo=backend=xla"])
    assert code == 0 and "stablehlo.sine" in out


TWICE = textwrap.dedent("""\
    func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      %1 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0, %1 : tensor<3xf32>, tensor<3xf32>
    }
    """)


def test_pass_pipeline_mixes_ours_and_upstream():
    code, out, err = run_opt(["-", "--pass-pipeline=builtin.module(jaxpr-verify,"
                              "jaxpr-to-stablehlo,canonicalize,cse)"], stdin=TWICE)
    assert (code, err) == (0, "")
    assert out.count("stablehlo.sine") == 1, out  # cse merged the two sines
    assert re.search(r"return (%\d+), \1 :", out), out


def test_upstream_pass_flags():
    code, out, _ = run_opt(["-", "--jaxpr-to-stablehlo", "--cse"], stdin=TWICE)
    assert code == 0 and out.count("stablehlo.sine") == 1
    code, out, _ = run_opt(["-", "--jaxpr-to-stablehlo"], stdin=TWICE)
    assert code == 0 and out.count("stablehlo.sine") == 2  # without cse both stay


def test_print_ir_after_all(sin_file):
    code, out, err = run_opt([sin_file, "--jaxpr-to-stablehlo", "--cse",
                              "--print-ir-after-all"])
    assert code == 0
    dumps = re.findall(r"// -----// IR Dump After (\S+) //----- //", err)
    assert dumps == ["jaxpr-to-stablehlo", "cse"]  # not the implicit verification
    first = err.split("IR Dump After jaxpr-to-stablehlo")[1]
    assert "stablehlo.sine" in first and "jaxpr.sin" not in first


def test_help_lists_every_pass():
    code, out, _ = run_opt(["--help"])
    assert code == 0
    assert "--split-input-file" in out and "--verify-diagnostics" in out
    for flag, cls in PASSES.items():
        assert cls.summary and "\n" not in cls.summary, f"pass {flag} needs a one-line summary"
        line = next((l for l in out.splitlines() if l.strip().startswith(f"--{flag} ")), None)
        assert line is not None, f"--help does not list --{flag}"
        assert cls.summary in line


# ---- --split-input-file ------------------------------------------------------------------
SPLIT = textwrap.dedent("""\
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }
    // -----
    func.func @f(%x: tensor<3xi32>) -> tensor<3xi32> {
      %0 = "jaxpr.sin"(%x) : (tensor<3xi32>) -> tensor<3xi32>
      return %0 : tensor<3xi32>
    }
    // -----
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "jaxpr.cos"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }
    """)


def test_split_input_file(tmp_path):
    path = tmp_path / "split.mlir"
    path.write_text(SPLIT)
    code, out, err = run_opt([path, "--split-input-file", "--jaxpr-to-stablehlo"])
    assert code == 1
    # the bad middle chunk is reported at its line in the whole file
    assert err == (f"{path}:7:8: error: 'jaxpr.sin' op sin does not accept dtype i32 "
                   f"(operand must be floating-point or complex)\n")
    # the other chunks (each defining @f) are processed independently and joined
    parts = out.split("// -----\n")
    assert len(parts) == 2
    assert "stablehlo.sine" in parts[0] and "stablehlo.cosine" in parts[1]


def test_without_split_chunks_share_one_module(tmp_path):
    path = tmp_path / "nosplit.mlir"
    path.write_text(SPLIT.replace("tensor<3xi32>", "tensor<3xf32>"))
    code, out, err = run_opt([path])
    assert code == 1 and out == ""
    assert re.match(rf"{re.escape(str(path))}:6:\d+: error: redefinition of symbol named 'f'",
                    err), err


# ---- --verify-diagnostics ---------------------------------------------------------------
EXPECTED_OK = textwrap.dedent("""\
    func.func @f(%x: tensor<3xi32>) -> tensor<3xi32> {
      // expected-error @+1 {{sin does not accept dtype i32}}
      %0 = "jaxpr.sin"(%x) : (tensor<3xi32>) -> tensor<3xi32>
      return %0 : tensor<3xi32>
    }
    // -----
    func.func @g(%x: tensor<3xf32>) -> tensor<2xf32> {
      %0 = "jaxpr.exp"(%x) : (tensor<3xf32>) -> tensor<2xf32>
      // expected-error @above {{result 0 has type tensor<2xf32>}}
      return %0 : tensor<2xf32>
    }
    // -----
    func.func @h(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "jaxpr.exp"(%x : (tensor<3xf32>) -> tensor<3xf32>  // expected-error {{expected ')'}}
      return %0 : tensor<3xf32>
    }
    """)


def test_verify_diagnostics_passes_when_annotations_match():
    code, out, err = run_opt(["-", "--split-input-file", "--verify-diagnostics"],
                             stdin=EXPECTED_OK)
    assert (code, err) == (0, "")


def test_verify_diagnostics_reports_missing_and_unexpected(tmp_path):
    path = tmp_path / "diag.mlir"
    path.write_text(EXPECTED_OK.replace("dtype i32}}", "dtype i64}}")
                    .replace("@above", "@below"))
    code, _, err = run_opt([path, "--split-input-file", "--verify-diagnostics"])
    assert code == 1
    lines = err.splitlines()
    assert f'{path}:3: error: expected error "sin does not accept dtype i64" was not produced' \
        in lines
    assert any(l.startswith(f"{path}:3:8: error: unexpected error: 'jaxpr.sin' op sin does "
                            "not accept dtype i32") for l in lines)
    assert f'{path}:10: error: expected error "result 0 has type tensor<2xf32>" was not ' \
        'produced' in lines
    assert any(l.startswith(f"{path}:8:8: error: unexpected error:") for l in lines)


def test_verify_diagnostics_fails_when_an_expected_error_is_missing():
    text = SIN.replace("  %0", "  // expected-error @+1 {{nothing wrong here}}\n  %0")
    code, _, err = run_opt(["-", "--verify-diagnostics"], stdin=text)
    assert code == 1
    assert err == '<stdin>:3: error: expected error "nothing wrong here" was not produced\n'


# ---- errors: file:line:col: error: ... , exit 1 ----------------------------------------------
BAD_INPUTS = {
    "unparsable": ('  %0 = "jaxpr.sin"(%x : (tensor<3xf32>) -> tensor<3xf32>',
                   r"2:\d+: error: expected '\)' to end operand list"),
    "unknown_op": ('  %0 = "jaxpr.foo"(%x) : (tensor<3xf32>) -> tensor<3xf32>',
                   r"2:8: error: 'jaxpr.foo' op is not a known jaxpr op"),
    "operand_count": ('  %0 = "jaxpr.sin"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> '
                      'tensor<3xf32>', r"2:8: error: 'jaxpr.sin' op expects 1 operand, got 2"),
    "operand_type": ('  %0 = "jaxpr.not"(%x) : (tensor<3xf32>) -> tensor<3xf32>',
                     r"2:8: error: 'jaxpr.not' op not does not accept dtype f32 \(operand "
                     r"must be bool or integer\)"),
    "attribute_type": ('  %0 = "jaxpr.round"(%x) {rounding_method = "up"} : (tensor<3xf32>)'
                       ' -> tensor<3xf32>', r"2:8: error: 'jaxpr.round' op attribute "
                       r"'rounding_method' must be an integer, got 'up'"),
    "missing_attribute": ('  %0 = "jaxpr.integer_pow"(%x) : (tensor<3xf32>) -> tensor<3xf32>',
                          r"2:8: error: 'jaxpr.integer_pow' op requires attribute 'y'"),
    "result_type": ('  %0 = "jaxpr.is_finite"(%x) : (tensor<3xf32>) -> tensor<3xf32>',
                    r"2:8: error: 'jaxpr.is_finite' op result 0 has type tensor<3xf32>, but "
                    r"the operands give tensor<3xi1>"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_a_located_error(case, tmp_path):
    op_line, pattern = BAD_INPUTS[case]
    text = SIN.replace('  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>', op_line)
    path = tmp_path / f"{case}.mlir"
    path.write_text(text)
    code, out, err = run_opt([path, "--jaxpr-to-stablehlo"])
    assert code == 1 and out == ""
    assert re.fullmatch(re.escape(str(path)) + ":" + pattern + r"[^\n]*\n", err), err


def test_op_without_lowering_is_a_located_error(sin_file, monkeypatch):
    monkeypatch.delitem(LOWER, E.SinOp)
    code, out, err = run_opt([sin_file, "--jaxpr-to-stablehlo"])
    assert code == 1 and out == ""
    assert err == (f"{sin_file}:2:8: error: 'jaxpr.sin' op jaxpr-to-stablehlo: no StableHLO "
                   "lowering rule for this op\n")


def test_invalid_ir_after_a_pass_names_the_pass(sin_file, monkeypatch):
    def bad_rule(ctx, x):  # leaves a jaxpr.sin with an attribute sin does not have
        return ir.Operation.create("jaxpr.sin", results=[x.type], operands=[x],
                                   attributes={"colour": ir.UnitAttr.get()}).result
    monkeypatch.setitem(LOWER, E.SinOp, bad_rule)
    code, _, err = run_opt([sin_file, "--jaxpr-to-stablehlo"])
    assert code == 1
    assert err.startswith(f"{sin_file}:2:8: error: IR invalid after --jaxpr-to-stablehlo: "
                          "'jaxpr.sin' op has unknown attribute 'colour'"), err


def test_mlir_invalid_ir_after_a_pass_names_the_pass(sin_file, monkeypatch):
    def bad_rule(ctx, x):  # a result type the function's return does not accept
        wrong = tensor_type(ShapedArray((3,), "float64"))
        return ir.Operation.create("jaxpr.sin", results=[wrong], operands=[x]).result
    monkeypatch.setitem(LOWER, E.SinOp, bad_rule)
    code, _, err = run_opt([sin_file, "--jaxpr-to-stablehlo"])
    assert code == 1
    assert err.startswith(f"{sin_file}:3:3: error: IR invalid after --jaxpr-to-stablehlo: "
                          "type of return operand 0 ('tensor<3xf64>') doesn't match"), err


@pytest.mark.parametrize("args,message", [
    (["--bogus-pass"], "mjax-opt: error: unknown pass 'bogus-pass'"),
    (["--pass-pipeline=builtin.module(jaxpr-verify,bogus)"],
     "mjax-opt: error: unknown pass 'bogus'"),
    (["--jaxpr-to-stablehlo=colour=red"],
     "mjax-opt: error: pass 'jaxpr-to-stablehlo' has no option 'colour' (options: backend, platform)"),
    (["--canonicalize=colour=red"],
     "mjax-opt: error: invalid options 'colour=red' for pass 'canonicalize'"),
    (["-o"], "mjax-opt: error: argument -o: expected one argument"),
    (["second.mlir"], "mjax-opt: error: unrecognized argument 'second.mlir'"),
], ids=["unknown-flag", "unknown-in-pipeline", "bad-option", "bad-upstream-option", "bad-o",
        "two-inputs"])
def test_bad_command_line(args, message, sin_file):
    code, out, err = run_opt([sin_file] + args)
    assert code == 1 and out == ""
    assert err.startswith(message), err
    assert len(err.splitlines()) == 1


def test_missing_and_binary_files(tmp_path):
    code, _, err = run_opt([tmp_path / "nope.mlir"])
    assert code == 1
    assert err == f"mjax-opt: error: cannot read {tmp_path / 'nope.mlir'}: No such file or " \
                  "directory\n"
    binary = tmp_path / "binary.mlir"
    binary.write_bytes(b"\xff\xfe\x00")
    code, _, err = run_opt([binary])
    assert code == 1 and err.startswith(f"mjax-opt: error: {binary} is not UTF-8 text")


def test_internal_error_is_reported_without_traceback(sin_file, monkeypatch, capsys):
    def broken_rule(ctx, x):
        raise RuntimeError("rule exploded")
    monkeypatch.setitem(LOWER, E.SinOp, broken_rule)
    with pytest.raises(SystemExit) as exit_info:
        opt.main([str(sin_file), "--jaxpr-to-stablehlo"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == "mjax-opt: internal error: RuntimeError: rule exploded\n"


# ---- as a separate process ------------------------------------------------------------------
def _subprocess(args, stdin=""):
    return subprocess.run([sys.executable, "-m", "mjax.passes.opt", *map(str, args)],
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_subprocess_good_and_bad_input(tmp_path):
    proc = _subprocess(["-", "--jaxpr-to-stablehlo"], stdin=SIN)
    assert proc.returncode == 0 and "stablehlo.sine" in proc.stdout
    proc = _subprocess(["-"], stdin=SIN.replace("jaxpr.sin", "jaxpr.nope"))
    assert proc.returncode == 1
    assert proc.stderr == "<stdin>:2:8: error: 'jaxpr.nope' op is not a known jaxpr op\n"
    proc = _subprocess([tmp_path / "missing.mlir"])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("mjax-opt: error: cannot read")
