"""A check's spec, read from a test cell's text: each call of a course assertion at the top level of the cell, its
arguments bound to the assertion's own signature (what a call leaves out takes the assertion's default, never
restated by a parser). The check kinds (:mod:`tfperf.autograding.check_kinds`) read their checks with these; and
which cell of a notebook is a test cell."""

from __future__ import annotations

import ast


def nbgrader_of(cell) -> dict:
    """A notebook cell's nbgrader metadata (empty for a demonstration cell)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def is_test(cell) -> bool:
    """Whether a notebook cell is a test cell (graded, not an answer)."""
    meta = nbgrader_of(cell)
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def top_level_calls(source: str, name: str) -> list[tuple[ast.Call, dict]]:
    """The calls of a function or method called ``name`` that are statements of their own at the top level of
    ``source``, or assigned there (``x = grading.check(...)``): each with its keywords by name."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for statement in tree.body:
        node = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
        if isinstance(node, ast.Call) and name in (getattr(node.func, "attr", None), getattr(node.func, "id", None)):
            found.append((node, {k.arg: k.value for k in node.keywords}))
    return found


#: What :func:`arguments` gives for a parameter that the call leaves out and the assertion has no default for.
MISSING = object()


def arguments(node: ast.Call, assertion) -> dict[str, object]:
    """The arguments of ``node``, a call of ``assertion`` in a test cell, by the assertion's parameter names: the
    expression written (an ``ast`` node) where the call gives one, else the assertion's own default value, read from
    its signature (so a parser never restates a default); :data:`MISSING` where there is neither. ValueError where
    the call does not fit the signature (or spreads ``*args``/``**kwargs``)."""
    import inspect

    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise ValueError("the call spreads its arguments")
    signature = inspect.signature(assertion)  # follows functools.wraps to the assertion itself
    try:
        bound = signature.bind_partial(*node.args, **{k.arg: k.value for k in node.keywords})
    except TypeError as err:
        raise ValueError(str(err)) from None
    return {
        name: bound.arguments.get(name, MISSING if parameter.default is inspect.Parameter.empty else parameter.default)
        for name, parameter in signature.parameters.items()
    }


def default(assertion, name: str) -> object:
    """The default of ``assertion``'s parameter ``name``, from its signature; :data:`MISSING` where it has none."""
    import inspect

    found = inspect.signature(assertion).parameters[name].default
    return MISSING if found is inspect.Parameter.empty else found


def literal(value: object, *, default: object = MISSING) -> object:
    """A value of :func:`arguments`: a literal written in the cell evaluated (ValueError for anything else), an
    assertion's default as it is; ``default`` where the argument is :data:`MISSING` (ValueError without one)."""
    if value is MISSING:
        if default is MISSING:
            raise ValueError("a required argument is missing")
        return default
    return ast.literal_eval(value) if isinstance(value, ast.AST) else value
