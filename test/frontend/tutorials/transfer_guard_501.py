"""Code cells of JAX's tutorial(s) docs/new_docs/501/transfer-guard.rst (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags; doctest blocks: one cell per `>>>` statement, prompts
and expected outputs removed."""

# %% docs/new_docs/501/transfer-guard.rst doctest tags=
jax.config.update("jax_transfer_guard", "allow")  # This is default.

# %% docs/new_docs/501/transfer-guard.rst doctest tags=
x = jnp.array(1)

# %% docs/new_docs/501/transfer-guard.rst doctest tags=
y = jnp.array(2)

# %% docs/new_docs/501/transfer-guard.rst doctest tags=
z = jnp.array(3)

# %% docs/new_docs/501/transfer-guard.rst doctest tags=
print("x", x)  # All transfers are allowed.

# %% docs/new_docs/501/transfer-guard.rst doctest tags=skip-execution
with jax.transfer_guard("disallow"):
  print("x", x)  # x has already been fetched into the host.
  print("y", jax.device_get(y))  # Explicit transfers are allowed.
  try:
    print("z", z)  # Implicit transfers are disallowed.
    assert False, "This line is expected to be unreachable."
  except:
    print("z could not be fetched")  # doctest: +SKIP
