"""Show the code a notebook measures: the library's own source, rendered from the code itself.

When a section times loops that live in the library, the learner should read exactly
the code that ran. ``show(fn)`` renders ``inspect.getsource(fn)`` (highlighted in a
notebook, plain text elsewhere), so the listing cannot drift from the code. Works for
module-level functions and for the nested functions a factory returns.
"""

from __future__ import annotations

import html
import inspect
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Listing:
    """Source code with a caption; displays as highlighted HTML in a notebook."""

    def __init__(self, code: str, caption: str):
        self.code = code
        self.caption = caption

    def __repr__(self) -> str:
        return f"# {self.caption}\n{self.code}"

    def _repr_html_(self) -> str:
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer

            body = highlight(self.code, PythonLexer(), HtmlFormatter(noclasses=True, nobackground=True))
        except ImportError:  # pygments comes with IPython; plain text otherwise
            body = f"<pre>{html.escape(self.code)}</pre>"
        return f"<details open><summary><code>{html.escape(self.caption)}</code></summary>{body}</details>"


def where(fn: Callable[..., Any]) -> str:
    """``module.name (file.py, line N)`` for a function."""
    fn = inspect.unwrap(fn)
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn))).replace(".<locals>", "")
    try:
        line = inspect.getsourcelines(fn)[1]
        file = Path(inspect.getsourcefile(fn) or "?").name
        return f"{fn.__module__}.{name} ({file}, line {line})"
    except (OSError, TypeError):
        return f"{fn.__module__}.{name}"


def source_of(fn: Callable[..., Any]) -> str:
    """The dedented source of ``fn`` (a ``tf.function`` shows the Python function it wraps)."""
    fn = getattr(fn, "python_function", fn)  # tf.function objects keep the original here
    return textwrap.dedent(inspect.getsource(inspect.unwrap(fn))).rstrip() + "\n"


def show(*fns: Callable[..., Any]) -> Listing:
    """The source of each function, one after the other, captioned with where it lives."""
    if not fns:
        raise ValueError("show() needs at least one function")
    parts = [f"# {where(getattr(fn, 'python_function', fn))}\n{source_of(fn)}" for fn in fns]
    caption = "Source: " + ", ".join(where(getattr(fn, "python_function", fn)).split(" (")[0] for fn in fns)
    return Listing("\n\n".join(parts), caption)
