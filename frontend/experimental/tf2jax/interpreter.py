"""Runs a `Graph` op by op through the rule table (ops/), in topological order.

The environment maps a node name to the list of its outputs. Values are NumPy arrays
(constants, and what is computed from constants only, so shapes built by `Shape`,
`StridedSlice` and `Pack` stay static for `Reshape`), mjax arrays or tracers,
`Resource` handles and the arrays that stand for TensorLists.
"""
from __future__ import annotations

from mjax.experimental.tf2jax.graph import Graph, from_function_def
from mjax.experimental.tf2jax.ops import RULES, UnsupportedOperationError  # noqa: F401


class Context:
    """What rules may use beyond their inputs: the function library (control flow,
    calls), the variables' current values (`state`, name -> value) and where we are."""

    def __init__(self, library: dict, state: dict, graphs: dict | None = None):
        self.library = library      # function name -> FunctionDef
        self.state = state
        self._graphs = {} if graphs is None else graphs   # parsed functions, by name
        self.rng = None             # the PRNG key random ops draw from (fn's rng=)
        self.where = ""

    def function(self, name: str) -> Graph:
        if name not in self._graphs:
            if name not in self.library:
                raise ValueError(f"tf2jax: the function '{name}' called {self.where} is "
                                 f"not in the graph's function library")
            self._graphs[name] = from_function_def(self.library[name], self.library)
        return self._graphs[name]

    def call(self, name: str, args) -> list:
        """Runs library function `name` on `args` (inlined in the caller's trace)."""
        return run_graph(self.function(name), list(args), self)

    def run(self, graph: Graph, args) -> list:
        """Runs `graph` (a loop or branch body) on `args`: how rules of ops with bodies
        reach the interpreter (rules never import it)."""
        return run_graph(graph, list(args), self)


def _order(graph: Graph) -> list:
    """The nodes the outputs need (data and control edges), dependencies first."""
    order, state = [], {}
    for root, _ in graph.outputs:
        stack = [(root, False)]
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(graph.nodes[name])
                continue
            if state.get(name) == 2:
                continue
            if state.get(name) == 1:
                continue     # already on the stack (graphs are acyclic: a duplicate)
            if name not in graph.nodes:
                raise ValueError(f"tf2jax: node '{name}' is used in {graph.where} but "
                                 f"not defined there")
            state[name] = 1
            stack.append((name, True))
            node = graph.nodes[name]
            for dep in [n for n, _ in node.inputs] + node.control:
                if state.get(dep) is None:
                    stack.append((dep, False))
    return order


def _missing_rule(node, graph) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        f"tf2jax: no rule for the TensorFlow op '{node.op}' (node '{node.name}' in "
        f"{graph.where})")


def check_rules(graph: Graph, ctx: Context, seen=None) -> None:
    """Fails at conversion, not at the first call, on an op without a rule in `graph`
    or in a function it calls (loop bodies, branches, nested tf.functions)."""
    seen = set() if seen is None else seen
    inputs = set(graph.inputs)
    for node in _order(graph):
        if node.name in inputs:
            continue
        if node.op not in RULES and node.op not in ctx.library:
            raise _missing_rule(node, graph)
        called = [node.op] if node.op in ctx.library else []
        for v in node.attrs.values():
            for name in (v if isinstance(v, list) else [v]):
                if isinstance(name, str) and name in ctx.library:
                    called.append(name)
        for name in called:
            if name not in seen:
                seen.add(name)
                check_rules(ctx.function(name), ctx, seen)


def run_graph(graph: Graph, args: list, ctx: Context) -> list:
    if len(args) != len(graph.inputs):
        raise TypeError(f"tf2jax: {graph.where} takes {len(graph.inputs)} inputs, "
                        f"got {len(args)}")
    env = {name: [a] for name, a in zip(graph.inputs, args)}
    outer_where = ctx.where
    for node in _order(graph):
        if node.name in env:
            continue
        rule = RULES.get(node.op)
        if rule is None and node.op in ctx.library:
            rule = RULES["PartitionedCall"]
        if rule is None:
            raise _missing_rule(node, graph)
        ins = [env[n][i] for n, i in node.inputs]
        ctx.where = f"in {graph.where}"
        try:
            out = rule(ctx, node, *ins)
        except UnsupportedOperationError:
            raise
        except Exception as e:      # say which node failed, keep the error's type
            if not any("tf2jax: while converting" in n
                       for n in getattr(e, "__notes__", ())):
                e.add_note(f"tf2jax: while converting the TensorFlow op '{node.op}' (node "
                           f"'{node.name}' in {graph.where})")
            raise
        finally:
            ctx.where = outer_where
        env[node.name] = list(out) if isinstance(out, (list, tuple)) else [out]
    return [env[n][i] for n, i in graph.outputs]
