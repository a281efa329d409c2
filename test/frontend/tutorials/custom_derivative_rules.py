"""Code cells of JAX's tutorial(s) docs/notebooks/Custom_derivative_rules_for_Python_code.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import jvp, grad

print(f(2., 3.))
y, y_dot = jvp(f, (2., 3.), (1., 0.))
print(y)
print(y_dot)
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
# Equivalent alternative using the defjvps convenience wrapper

@custom_jvp
def f(x, y):
  return jnp.sin(x) * y

f.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
          lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(f(2., 3.))
y, y_dot = jvp(f, (2., 3.), (1., 0.))
print(y)
print(y_dot)
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

log1pexp(3.)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import jit, grad, vmap

print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(log1pexp)(100.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import make_jaxpr

make_jaxpr(grad(log1pexp))(100.)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(log1pexp)(100.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

log1pexp.defjvps(lambda t, ans, x: (1 - 1/(1 + jnp.exp(x))) * t)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(log1pexp)(100.))
print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def f(x):
  return x / (1 + jnp.sqrt(x))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(0.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x):
  return x / (1 + jnp.sqrt(x))

@f.defjvp
def f_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = f(x)
  ans_dot = ((jnp.sqrt(x) + 2) / (2 * (jnp.sqrt(x) + 1)**2)) * x_dot
  return ans, ans_dot

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(0.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x):
  return x / (1 + jnp.sqrt(x))

f.defjvps(lambda t, ans, x: ((jnp.sqrt(x) + 2) / (2 * (jnp.sqrt(x) + 1)**2)) * t)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(0.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
import matplotlib.pyplot as plt
from jax import vmap

t = jnp.linspace(0, 10, 1000)

plt.plot(jnp.sin(t))
plt.plot(vmap(grad(jnp.sin))(t))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def clip_sin(x):
  x = clip_gradient(-0.75, 0.75, x)
  return jnp.sin(x)

plt.plot(clip_sin(t))
plt.plot(vmap(grad(clip_sin))(t))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax.lax import while_loop

def fixed_point(f, a, x_guess):
  def cond_fun(carry):
    x_prev, x = carry
    return jnp.abs(x_prev - x) > 1e-6

  def body_fun(carry):
    _, x = carry
    return x, f(a, x)

  _, x_star = while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
  return x_star

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def newton_sqrt(a):
  update = lambda a, x: 0.5 * (x + a / x)
  return fixed_point(update, a, a)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(newton_sqrt(2.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(jit(vmap(newton_sqrt))(jnp.array([1., 2., 3., 4.])))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import vjp

@partial(custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
  def cond_fun(carry):
    x_prev, x = carry
    return jnp.abs(x_prev - x) > 1e-6

  def body_fun(carry):
    _, x = carry
    return x, f(a, x)

  _, x_star = while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
  return x_star

def fixed_point_fwd(f, a, x_init):
  x_star = fixed_point(f, a, x_init)
  return x_star, (a, x_star)

def fixed_point_rev(f, res, x_star_bar):
  a, x_star = res
  _, vjp_a = vjp(lambda a: f(a, x_star), a)
  a_bar, = vjp_a(fixed_point(partial(rev_iter, f),
                             (a, x_star, x_star_bar),
                             x_star_bar))
  return a_bar, jnp.zeros_like(x_star)

def rev_iter(f, packed, u):
  a, x_star, x_star_bar = packed
  _, vjp_x = vjp(lambda x: f(a, x), x_star)
  return x_star_bar + vjp_x(u)[0]

fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(newton_sqrt(2.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(newton_sqrt)(2.))
print(grad(grad(newton_sqrt))(2.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(jnp.sqrt)(2.))
print(grad(grad(jnp.sqrt))(2.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import jvp

print(f(3.))

y, y_dot = jvp(f, (3.,), (1.,))
print(y)
print(y_dot)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import grad

print(grad(f)(3.))
print(grad(grad(f))(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x):
  return jnp.sin(x)

f.defjvps(lambda t, ans, x: jnp.cos(x) * t)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x, y):
  return x ** 2 * y

f.defjvps(lambda x_dot, primal_out, x, y: 2 * x * y * x_dot,
          lambda y_dot, primal_out, x, y: x ** 2 * y_dot)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))
print(grad(f, 0)(2., 3.))  # same as above
print(grad(f, 1)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x, y):
  return x ** 2 * y

f.defjvps(lambda x_dot, primal_out, x, y: 2 * x * y * x_dot,
          None)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))
print(grad(f, 0)(2., 3.))  # same as above
print(grad(f, 1)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import vmap, jit

print(f(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(vmap(f)(jnp.arange(3.)))
print(jit(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
y, y_dot = jvp(f, (3.,), (1.,))
print(y_dot)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
grad(grad(f))(3.)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(1.))
print(grad(f)(-1.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import grad

print(f(3.))
print(grad(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(f(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
y, f_vjp = vjp(f, 3.)
print(y)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(f_vjp(1.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import jvp

try:
  jvp(f, (3.,), (1.,))
except TypeError as e:
  print('ERROR! {}'.format(e))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def foo(x):
  y = x ** 2
  y = debug(y)  # insert pdb in corresponding backward pass step
  return jnp.sin(y)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
pt = Point(1., 2.)

print(f(pt))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(fun)(pt))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
pt = Point(1., 2.)

print(f(pt))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(fun)(pt))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from functools import partial

@partial(custom_jvp, nondiff_argnums=(0,))
def app(f, x):
  return f(x)

@app.defjvp
def app_jvp(f, primals, tangents):
  x, = primals
  x_dot, = tangents
  return f(x), 2. * x_dot

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(app(lambda x: x ** 3, 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(app, 1)(lambda x: x ** 3, 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@partial(custom_jvp, nondiff_argnums=(0, 2))
def app2(f, x, g):
  return f(g((x)))

@app2.defjvp
def app2_jvp(f, g, primals, tangents):
  x, = primals
  x_dot, = tangents
  return f(g(x)), 3. * x_dot

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(app2(lambda x: x ** 3, 3., lambda y: 5 * y))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(app2, 1)(lambda x: x ** 3, 3., lambda y: 5 * y))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@partial(custom_vjp, nondiff_argnums=(0,))
def app(f, x):
  return f(x)

def app_fwd(f, x):
  return f(x), x

def app_bwd(f, x, g):
  return (5 * g,)

app.defvjp(app_fwd, app_bwd)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(app(lambda x: x ** 2, 4.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(app, 1)(lambda x: x ** 2, 4.))

