"""Code cells of JAX's tutorial(s) docs/new_docs/301/custom-jvp-vjp.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
import jax.numpy as jnp
from jax import custom_jvp

@custom_jvp
def f(x, y):
  return jnp.sin(x) * y

@f.defjvp
def f_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  primal_out = f(x, y)
  tangent_out = jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot
  return primal_out, tangent_out

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import jvp, grad

print(f(2., 3.))
y, y_dot = jvp(f, (2., 3.), (1., 0.))
print(y)
print(y_dot)
print(grad(f)(2., 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
# Equivalent alternative using the defjvps convenience wrapper

@custom_jvp
def f(x, y):
  return jnp.sin(x) * y

f.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
          lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(f(2., 3.))
y, y_dot = jvp(f, (2., 3.), (1., 0.))
print(y)
print(y_dot)
print(grad(f)(2., 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import custom_vjp

@custom_vjp
def f(x, y):
  return jnp.sin(x) * y

def f_fwd(x, y):
  # Returns primal output and residuals to be used in backward pass by f_bwd.
  return f(x, y), (jnp.cos(x), jnp.sin(x), y)

def f_bwd(res, g):
  cos_x, sin_x, y = res # Gets residuals computed in f_fwd
  return (cos_x * g * y, sin_x * g)

f.defvjp(f_fwd, f_bwd)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(2., 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

log1pexp(3.)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import jit, grad, vmap

print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(log1pexp)(100.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
jit(grad(log1pexp)).trace(100.).jaxpr

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import custom_jvp

@custom_jvp
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = log1pexp(x)
  ans_dot = (1 - 1/(1 + jnp.exp(x))) * x_dot
  return ans, ans_dot

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(log1pexp)(100.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_jvp
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

log1pexp.defjvps(lambda t, ans, x: (1 - 1/(1 + jnp.exp(x))) * t)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(log1pexp)(100.))
print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from functools import partial
from jax import custom_vjp

@custom_vjp
def clip_gradient(lo, hi, x):
  return x  # identity function

def clip_gradient_fwd(lo, hi, x):
  return x, (lo, hi)  # save bounds as residuals

def clip_gradient_bwd(res, g):
  lo, hi = res
  return (None, None, jnp.clip(g, lo, hi))  # use None to indicate zero cotangents for lo and hi

clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
import matplotlib.pyplot as plt
from jax import vmap

t = jnp.linspace(0, 10, 1000)

plt.plot(jnp.sin(t))
plt.plot(vmap(grad(jnp.sin))(t))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
def clip_sin(x):
  x = clip_gradient(-0.75, 0.75, x)
  return jnp.sin(x)

plt.plot(clip_sin(t))
plt.plot(vmap(grad(clip_sin))(t))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import custom_jvp
import jax.numpy as jnp

# f :: a -> b
@custom_jvp
def f(x):
  return jnp.sin(x)

# f_jvp :: (a, T a) -> (b, T b)
def f_jvp(primals, tangents):
  x, = primals
  t, = tangents
  return f(x), jnp.cos(x) * t

f.defjvp(f_jvp)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import jvp

print(f(3.))

y, y_dot = jvp(f, (3.,), (1.,))
print(y)
print(y_dot)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import grad

print(grad(f)(3.))
print(grad(grad(f))(3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_jvp
def f(x, y):
  return x ** 2 * y

@f.defjvp
def f_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  primal_out = f(x, y)
  tangent_out = 2 * x * y * x_dot + x ** 2 * y_dot
  return primal_out, tangent_out

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(2., 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_jvp
def f(x):
  return jnp.sin(x)

f.defjvps(lambda t, ans, x: jnp.cos(x) * t)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_jvp
def f(x, y):
  return x ** 2 * y

f.defjvps(lambda x_dot, primal_out, x, y: 2 * x * y * x_dot,
          lambda y_dot, primal_out, x, y: x ** 2 * y_dot)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(2., 3.))
print(grad(f, 0)(2., 3.))  # same as above
print(grad(f, 1)(2., 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_jvp
def f(x, y):
  return x ** 2 * y

f.defjvps(lambda x_dot, primal_out, x, y: 2 * x * y * x_dot,
          None)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(2., 3.))
print(grad(f, 0)(2., 3.))  # same as above
print(grad(f, 1)(2., 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_jvp
def f(x):
  print('called f!')  # a harmless side-effect
  return jnp.sin(x)

@f.defjvp
def f_jvp(primals, tangents):
  print('called f_jvp!')  # a harmless side-effect
  x, = primals
  t, = tangents
  return f(x), jnp.cos(x) * t

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import vmap, jit

print(f(3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(vmap(f)(jnp.arange(3.)))
print(jit(f)(3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
y, y_dot = jvp(f, (3.,), (1.,))
print(y_dot)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
grad(grad(f))(3.)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_jvp
def f(x):
  if x > 0:
    return jnp.sin(x)
  else:
    return jnp.cos(x)

@f.defjvp
def f_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = f(x)
  if x > 0:
    return ans, 2 * x_dot
  else:
    return ans, 3 * x_dot

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(1.))
print(grad(f)(-1.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import custom_vjp
import jax.numpy as jnp

# f :: a -> b
@custom_vjp
def f(x):
  return jnp.sin(x)

# f_fwd :: a -> (b, c)
def f_fwd(x):
  return f(x), jnp.cos(x)

# f_bwd :: (c, CT b) -> CT a
def f_bwd(cos_x, y_bar):
  return (cos_x * y_bar,)

f.defvjp(f_fwd, f_bwd)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import grad

print(f(3.))
print(grad(f)(3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import custom_vjp

@custom_vjp
def f(x, y):
  return jnp.sin(x) * y

def f_fwd(x, y):
  return f(x, y), (jnp.cos(x), jnp.sin(x), y)

def f_bwd(res, g):
  cos_x, sin_x, y = res
  return (cos_x * g * y, sin_x * g)

f.defvjp(f_fwd, f_bwd)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(2., 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_vjp
def f(x):
  print("called f!")
  return jnp.sin(x)

def f_fwd(x):
  print("called f_fwd!")
  return f(x), jnp.cos(x)

def f_bwd(cos_x, y_bar):
  print("called f_bwd!")
  return (cos_x * y_bar,)

f.defvjp(f_fwd, f_bwd)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(f(3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(f)(3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import vjp

y, f_vjp = vjp(f, 3.)
print(y)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(f_vjp(1.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from jax import jvp

try:
  jvp(f, (3.,), (1.,))
except TypeError as e:
  print('ERROR! {}'.format(e))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
import pdb

@custom_vjp
def debug(x):
  return x  # acts like identity

def debug_fwd(x):
  return x, x

def debug_bwd(x, g):
  pdb.set_trace()
  return g

debug.defvjp(debug_fwd, debug_bwd)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
def foo(x):
  y = x ** 2
  y = debug(y)  # insert pdb in corresponding backward pass step
  return jnp.sin(y)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=raises-exception
from jax import jvp

jvp(lambda x: clip_gradient(-1., 1., x), (3.,), (1.,))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from collections import namedtuple
Point = namedtuple("Point", ["x", "y"])

@custom_jvp
def f(pt):
  x, y = pt.x, pt.y
  return {'a': x ** 2,
          'b': (jnp.sin(x), jnp.cos(y))}

@f.defjvp
def f_jvp(primals, tangents):
  pt, = primals
  pt_dot, =  tangents
  ans = f(pt)
  ans_dot = {'a': 2 * pt.x * pt_dot.x,
             'b': (jnp.cos(pt.x) * pt_dot.x, -jnp.sin(pt.y) * pt_dot.y)}
  return ans, ans_dot

def fun(pt):
  dct = f(pt)
  return dct['a'] + dct['b'][0]

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
pt = Point(1., 2.)

print(f(pt))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(fun)(pt))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@custom_vjp
def f(pt):
  x, y = pt.x, pt.y
  return {'a': x ** 2,
          'b': (jnp.sin(x), jnp.cos(y))}

def f_fwd(pt):
  return f(pt), pt

def f_bwd(pt, g):
  a_bar, (b0_bar, b1_bar) = g['a'], g['b']
  x_bar = 2 * pt.x * a_bar + jnp.cos(pt.x) * b0_bar
  y_bar = -jnp.sin(pt.y) * b1_bar
  return (Point(x_bar, y_bar),)

f.defvjp(f_fwd, f_bwd)

def fun(pt):
  dct = f(pt)
  return dct['a'] + dct['b'][0]

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
pt = Point(1., 2.)

print(f(pt))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(fun)(pt))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
from functools import partial

@partial(custom_jvp, nondiff_argnums=(0,))
def app(f, x):
  return f(x)

@app.defjvp
def app_jvp(f, primals, tangents):
  x, = primals
  x_dot, = tangents
  return f(x), 2. * x_dot

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(app(lambda x: x ** 3, 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(app, 1)(lambda x: x ** 3, 3.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@partial(custom_jvp, nondiff_argnums=(0, 2))
def app2(f, x, g):
  return f(g((x)))

@app2.defjvp
def app2_jvp(f, g, primals, tangents):
  x, = primals
  x_dot, = tangents
  return f(g(x)), 3. * x_dot

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(app2(lambda x: x ** 3, 3., lambda y: 5 * y))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(app2, 1)(lambda x: x ** 3, 3., lambda y: 5 * y))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
@partial(custom_vjp, nondiff_argnums=(0,))
def app(f, x):
  return f(x)

def app_fwd(f, x):
  return f(x), x

def app_bwd(f, x, g):
  return (5 * g,)

app.defvjp(app_fwd, app_bwd)

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(app(lambda x: x ** 2, 4.))

# %% docs/new_docs/301/custom-jvp-vjp.md cell tags=
print(grad(app, 1)(lambda x: x ** 2, 4.))
