"""`python -m mjax`, mjax.alias_jax() and MJAX_ALIAS_JAX=1 make `import jax` give mjax's
module objects and never load real jax (installed here as the test oracle). Each case
runs in its own process, since the alias is process-wide."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import jax  # the oracle: its folder is what the aliased processes must never load from

JAX_DIR = os.path.dirname(jax.__file__)
ROOT = pathlib.Path(__file__).resolve().parents[2]

# What an aliased program reports: identity of modules, version, a missing module's
# error, and every loaded module's file under real jax's folder (must be none).
PROBE = textwrap.dedent("""
    import json, sys, os
    import jax, jax.numpy as jnp
    from jax.experimental import pallas
    from jax import lax, random
    import jax.extend.core, jax.interpreters.ad, jax.typing, jax.flatten_util
    import mjax
    out = {"same": [jax is mjax, jnp is mjax.numpy, pallas is mjax.experimental.pallas,
                    lax is mjax.lax, random is mjax.random,
                    jax.extend.core is mjax.extend.core,
                    sys.modules["jax.numpy"] is mjax.numpy],
           "version": jax.__version__, "argv": sys.argv[1:],
           "sum": float(jnp.sum(jnp.arange(4.0)))}
    try:
        import jax.experimental.mosaic.gpu
    except ImportError as e:
        out["missing"] = [type(e).__name__, str(e)]
    jax_dir = os.path.dirname(os.path.abspath({jax_dir!r}))
    out["from_jax"] = sorted(n for n, m in list(sys.modules.items())
                             if (getattr(m, "__file__", None) or "").startswith(jax_dir + os.sep))
    print("RESULT" + json.dumps(out))
""").replace("{jax_dir!r}", repr(os.path.join(JAX_DIR, "__init__.py")))


def _run(args, env=None, cwd=None):
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})}, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


def _check(out):
    assert out["same"] == [True] * 7
    assert out["version"] == "0.10.2"
    assert out["sum"] == 6.0
    kind, msg = out["missing"]
    assert kind == "ModuleNotFoundError"
    assert "jax.experimental.mosaic.gpu" in msg and "mjax lacks it" in msg
    assert out["from_jax"] == []


def test_python_dash_m_mjax_runs_a_script(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROBE)
    out = _run(["-m", "mjax", str(script), "a", "--b"])
    _check(out)
    assert out["argv"] == ["a", "--b"]


def test_python_dash_m_mjax_runs_a_module(tmp_path):
    (tmp_path / "probe_mod.py").write_text(PROBE)
    # (tmp_path ahead of the PYTHONPATH the suite has: where mjax is installed through
    # it, as on the TPU machine, the child must still import it)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    out = _run(["-m", "mjax", "-m", "probe_mod", "x"], cwd=tmp_path,
               env={"PYTHONPATH": path})
    _check(out)
    assert out["argv"] == ["x"]


def test_alias_jax_before_first_import():
    _check(_run(["-c", "import mjax; mjax.alias_jax()\n" + PROBE]))


def test_env_variable_through_the_installed_hook(tmp_path):
    # The hook is a .pth file; processing tmp_path as a site dir stands for installing it
    # into site-packages (`python -m mjax --install-env-hook`).
    subprocess.run([sys.executable, "-m", "mjax", "--install-env-hook", str(tmp_path)],
                   check=True, capture_output=True, timeout=300)
    start = f"import site; site.addsitedir({str(tmp_path)!r})\n"
    _check(_run(["-c", start + PROBE], env={"MJAX_ALIAS_JAX": "1"}))
    # Without the variable, the hook does nothing: `import jax` is real jax.
    proc = subprocess.run([sys.executable, "-c", start + "import jax, sys; print(jax.__file__, "
                           "'mjax' in sys.modules)"], capture_output=True, text=True,
                          timeout=300, env={k: v for k, v in os.environ.items()
                                            if k != "MJAX_ALIAS_JAX"})
    assert proc.stdout.split() == [os.path.join(JAX_DIR, "__init__.py"), "False"]


def test_every_public_module_is_the_mjax_module():
    # Every JAX module that mjax has (docs/gen_api_coverage.py's list, made with real jax
    # in a child process: listing them imports jax2tf, so TensorFlow) imports, aliased,
    # as the same object as mjax's.
    listing = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import json, sys
        sys.path.insert(0, %r)
        import gen_api_coverage as g
        print(json.dumps([m for m in g.jax_modules()[0] if g.mjax_module(m) is not None]))
    """) % str(ROOT / "docs")], capture_output=True, text=True, timeout=600)
    assert listing.returncode == 0, listing.stderr[-2000:]
    names = json.loads(listing.stdout.strip().splitlines()[-1])
    assert len(names) > 60
    code = textwrap.dedent("""
        import importlib, sys, json
        import mjax; mjax.alias_jax()
        names = %r
        bad = [m for m in names if importlib.import_module(m) is not sys.modules["m" + m]]
        print("RESULT" + json.dumps({"bad": bad}))
    """) % names
    assert _run(["-c", code])["bad"] == []


def test_alias_after_real_jax_is_an_error():
    proc = subprocess.run([sys.executable, "-c", "import jax, mjax; mjax.alias_jax()"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "real jax is already imported" in proc.stderr
