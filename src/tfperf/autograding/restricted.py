"""How a grading worker runs a learner's answer cell: compiled by RestrictedPython, run with guarded builtins.

RestrictedPython (`zopefoundation/RestrictedPython`) compiles Python source so that every attribute read
goes through ``_getattr_`` and every attribute or item write through ``_write_``; names and attributes that start
with an underscore are refused when the source is compiled. This module holds the course's policy for it:

- :class:`AnswerPolicy`, the compiler's rules: RestrictedPython's own, but for what honest answers write
  (``super().__init__(...)``, ``self.n += 1`` and ``a[i] += 1`` rewritten through the guards, ``self._calls`` on
  the answer's own objects, private names such as ``_cache``, slices, ``nonlocal``, annotations, ``match``,
  ``type(x).__name__``, ``print`` left as Python's: what an answer prints is what the prints checks read), and
  import statements of only what the exercise allows (the instructor's answer cell's metadata, as the static
  screen reads it), none of a function it withholds or that the guards refuse (``from os import write``).
- the guards (:class:`Guards`), checked while the answer runs: no underscore attribute but its own, however it is
  named (``getattr(f, "__glob" + "als__")``, ``map(getattr, ...)``, a format string's fields); none of the
  attributes that reach frames, raw memory or code made from parts (:data:`UNREADABLE_ATTRIBUTES`), nor what
  TensorFlow's traced functions and graphs captured (:data:`CAPTURE_ATTRIBUTES`); of ``os`` and
  ``sys`` only what reaches no process, descriptor or interpreter state (:data:`MODULE_ATTRIBUTES`,
  :data:`GUARDED`); no module it could not import, reached as another's attribute; none of the exercise's withheld
  functions; no write to a module, to a class the answer did not define, to a function, or to an object of the
  course's own classes (but a record the answer fills in); no class with special attributes a class statement
  could not bind (``type(name, bases, {"__array_interface__": ...})``).
- the builtins the answer sees (:meth:`Guards.builtins`): Python's, without those that read or run code or files
  (``open``, ``eval``, ``exec``, ``compile``, ``globals``, ``vars``, ...), with guarded ``getattr``, ``hasattr``,
  ``setattr``, ``delattr`` and ``type``. ``__import__`` is Python's: the answer's import statements were checked
  when it was compiled, it cannot name ``__import__`` itself, and a C function it calls (NumPy's) may import
  its own modules through it.

A function keeps the builtins of the namespace it was made in (Python 3.10 and later), and the namespace keeps
these builtins after the answer ran, so functions that TensorFlow's AutoGraph makes again from an answer's source
at trace time see them too. AutoGraph reads that source from the line cache: :func:`run_answer` puts there the
source as RestrictedPython rewrote it, so a ``tf.function`` body runs with the same guards as the rest.

The static screen (:mod:`tfperf.autograding.screen`) still runs first: it says, with line numbers, what an honest
answer has no use for; these guards hold whatever the screen did not see. They are a line of defence inside the
process that runs the answer, not a boundary of memory: what the process may open (``/proc/self/mem``, its own
descriptors by path) is the sandbox's business (:func:`tfperf.autograding.sandbox.confine_thread`).
"""

from __future__ import annotations

import _string
import ast
import builtins
import copy
import linecache
import operator
import string
import types
import weakref

from RestrictedPython.transformer import (
    ALLOWED_FUNC_NAMES,
    INSPECT_ATTRIBUTES,
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
)

from tfperf.autograding.screen import ALLOWED_DUNDERS, ALLOWED_IMPORTS, FRAME_ATTRIBUTES, WITHHELD_WHY


class RestrictedAnswer(Exception):
    """The answer did something that the grading does not let an answer do."""


#: Names RestrictedPython's rewritten code calls: an answer may not define or read them itself.
GUARD_NAMES = frozenset(
    {
        "_getattr_", "_write_", "_getitem_", "_getiter_", "_iter_unpack_sequence_", "_unpack_sequence_",
        "_apply_", "_inplacevar_", "_print_", "_print", "_own_", "__metaclass__", "__builtins__", "__name__",
    }
)  # fmt: skip

#: Special methods an answer's class may define (RestrictedPython's and the screen's), and reach through
#: ``super()`` (a Keras layer's or model's constructor, say).
SPECIAL_METHODS = (
    ALLOWED_FUNC_NAMES
    | ALLOWED_DUNDERS
    | {"__getitem__", "__setitem__", "__contains__", "__bool__", "__post_init__", "__add__", "__sub__", "__mul__"}
    | {"__truediv__", "__neg__", "__lt__", "__le__", "__gt__", "__ge__", "__ne__"}
)
SUPER_METHODS = SPECIAL_METHODS - {"__name__", "__doc__"}
#: Special attributes an answer may read (strings): ``type(x).__name__``.
READABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__"})
#: The names under which a method reaches its own object or class: ``self._calls`` is the answer's own attribute
#: where ``self`` is an object of a class the answer defined (checked while it runs).
OWNERS = frozenset({"self", "cls"})


def _private(name: str) -> bool:
    """``_calls``: a private name, neither special (``__x__``), mangled (``__x``) nor a guard's (``_getattr_``)."""
    return name.startswith("_") and not name.startswith("__") and not name.endswith("_")


class AnswerPolicy(RestrictingNodeTransformer):
    """RestrictedPython's rules, with what honest answers write allowed (see the module's docstring)."""

    def check_name(self, node, name, allow_magic_methods=False):
        if name == "printed":  # a plain variable here (RestrictedPython reserves it for its print collector)
            return
        if allow_magic_methods and name in SPECIAL_METHODS:
            return
        if name is not None and _private(name) and name not in GUARD_NAMES:  # ``_cache``: the answer's own
            return
        super().check_name(node, name, allow_magic_methods)

    def visit_Name(self, node):
        # RestrictedPython turns ``print`` into a collector and ``printed`` into its text: here both stay names.
        if node.id in ("print", "printed") and isinstance(node.ctx, ast.Load):
            return node
        return super().visit_Name(node)

    def visit_Attribute(self, node):
        value = node.value
        if (
            node.attr in SUPER_METHODS
            and isinstance(node.ctx, ast.Load)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "super"
        ):
            return self.node_contents_visit(node)  # super().__init__: read directly, nothing else underscored
        if node.attr in READABLE_DUNDERS and isinstance(node.ctx, ast.Load):
            call = ast.Call(ast.Name("_getattr_", ast.Load()), [self.visit(value), ast.Constant(node.attr)], [])
            return ast.copy_location(call, node)  # ``type(x).__name__``, guarded like any other read
        if _private(node.attr) and isinstance(value, ast.Name) and value.id in OWNERS:
            # ``self._calls``: read through the guard, which lets it only on the answer's own classes and objects
            if isinstance(node.ctx, ast.Load):
                call = ast.Call(ast.Name("_getattr_", ast.Load()), [value, ast.Constant(node.attr)], [])
                return ast.copy_location(call, node)
            own = ast.Call(ast.Name("_own_", ast.Load()), [value], [])
            return ast.copy_location(ast.Attribute(ast.copy_location(own, value), node.attr, node.ctx), node)
        return super().visit_Attribute(node)

    def visit_Subscript(self, node):
        # An item read stays Python's (RestrictedPython's ``_getitem_(x, a:b)`` is no Python once written out, and
        # reading an item reaches no attribute); a write still goes through ``_write_``.
        if isinstance(node.ctx, ast.Load):
            return self.node_contents_visit(node)
        return super().visit_Subscript(node)

    def contents(self, node):
        """A node left as Python wrote it, its contents checked as any other."""
        return self.node_contents_visit(node)

    # Statements RestrictedPython refuses and honest answers write: they reach nothing the guards do not see.
    visit_Nonlocal = visit_AnnAssign = visit_Match = visit_match_case = contents
    visit_MatchValue = visit_MatchSingleton = visit_MatchSequence = visit_MatchOr = contents

    def visit_MatchClass(self, node):
        for attribute in node.kwd_attrs:  # ``case C(x=...)`` reads the attribute x of the subject itself
            if attribute.startswith("_"):
                self.error(node, f'"{attribute}" is an invalid attribute name because it starts with "_".')
        return self.node_contents_visit(node)

    def visit_MatchAs(self, node):  # ``case x`` and ``case [*x]`` bind x; ``case {**x}`` binds x too
        self.check_name(node, getattr(node, "name", None) or getattr(node, "rest", None))
        return self.node_contents_visit(node)

    visit_MatchStar = visit_MatchMapping = visit_MatchAs

    #: The exercise's guards (set by :func:`compile_answer`): what its import statements may import.
    guards: Guards | None = None

    def visit_Import(self, node):
        for alias in node.names:
            self.check_import(node, alias.name)
        return super().visit_Import(node)

    def visit_ImportFrom(self, node):
        if node.level or node.module is None:
            self.error(node, "relative imports are not allowed.")
        else:
            self.check_import(node, node.module, [alias.name for alias in node.names])
        return super().visit_ImportFrom(node)

    def check_import(self, node, module: str, names=()) -> None:
        """An import statement of the answer: of what the exercise allows (the static screen's list), and no name
        from a module that the guards would refuse to read as an attribute (``from os import write``)."""
        importable = self.guards.importable if self.guards is not None else frozenset(ALLOWED_IMPORTS)
        if module.partition(".")[0] not in importable or _unreadable(module):
            self.error(node, f"importing {module} is not allowed in this exercise.")
            return
        for name in names:
            allowed = MODULE_ATTRIBUTES.get(module)
            if (module, name) in GUARDED or (allowed is not None and name not in allowed):
                self.error(node, f"importing {name} from {module} is not allowed (use {module}.{name}).")
            elif self.guards is not None and (module, name) in self.guards.withheld_names:
                self.error(node, f"{module}.{name} is withheld in this exercise ({WITHHELD_WHY}).")

    # Iteration and unpacking stay Python's: RestrictedPython's guards for them protect Zope's containers, and a
    # ``for`` over a tensor or a dataset inside a ``tf.function`` must stay a loop AutoGraph can convert.
    guard_iter = visit_Assign = visit_With = contents

    def visit_AugAssign(self, node):
        if isinstance(node.target, (ast.Attribute, ast.Subscript)):
            # ``t.a += v`` becomes ``t.a = _inplacevar_("+=", t.a, v)``, each part then guarded like any other
            read = self.visit(_with_context(node.target, ast.Load()))
            value = ast.Call(
                func=ast.Name("_inplacevar_", ast.Load()),
                args=[ast.Constant(IOPERATOR_TO_STR[type(node.op)]), read, self.visit(node.value)],
                keywords=[],
            )
            assign = ast.Assign(targets=[self.visit(node.target)], value=value)
            return ast.fix_missing_locations(ast.copy_location(assign, node))
        return super().visit_AugAssign(node)


def _with_context(node: ast.expr, ctx: ast.expr_context) -> ast.expr:
    """A copy of an attribute or item target with ``ctx`` as its context (what it reads rather than writes)."""
    clone = copy.deepcopy(node)
    clone.ctx = ctx
    return clone


# ---------------------------------------------------------------- the guards

#: Per module, the only attributes an answer may read: the rest reaches the process (its descriptors, its
#: memory, its interpreter) or other processes.
MODULE_ATTRIBUTES = types.MappingProxyType({
    "os": frozenset(
        {
            "cpu_count", "path", "getcwd", "listdir", "makedirs", "mkdir", "remove", "unlink", "rmdir", "rename",
            "replace", "scandir", "stat", "walk", "fspath", "sep", "linesep", "pathsep", "getpid", "getenv",
        }
    ),
    "sys": frozenset(
        {
            "version", "version_info", "platform", "float_info", "maxsize", "byteorder", "getsizeof",
            "getrecursionlimit", "implementation", "float_repr_style", "int_info",
        }
    ),
})  # fmt: skip


def _write_to_a_standard_stream(fd: int, data) -> int:
    """``os.write`` as an answer sees it: to its standard output or error only (a debug line), never to another
    descriptor of the worker (its reports go through one)."""
    if fd not in (1, 2):
        raise _refuse(f"writing to file descriptor {fd!r}")
    import os

    return os.write(fd, data)


#: Attributes no answer reads, of any object: the call stack (frames, tracebacks, generators' and coroutines'
#: frames: every caller's variables, the worker's own among them); memory itself (C types, arrays over raw
#: memory, strides that step outside an array's buffer, a file object's raw descriptor); and library functions that
#: read attributes or run code by their own means, past these guards (attribute getters, format strings, type hints
#: evaluated from strings, code and functions made from parts, arrays read back through pickle).
UNREADABLE_ATTRIBUTES = (
    INSPECT_ATTRIBUTES
    | FRAME_ATTRIBUTES
    | {
        "ctypes", "ctypeslib", "as_strided", "dlpack", "from_dlpack", "to_dlpack", "frombuffer", "cr_await", "raw",
        "attrgetter", "methodcaller", "Formatter", "get_field", "vformat", "get_type_hints", "ForwardRef",
        "CodeType", "FunctionType", "LambdaType", "new_class", "read_array",
    }
)  # fmt: skip

#: What TensorFlow's traced functions and graphs hold of the functions they call: the variables and resources they
#: captured (the course's own among them: chapter 5's count of training steps, which a graph that calls
#: ``gpu_sync.train_step`` captures), reached through the function, its graph, an operation's inputs or a graph
#: tensor's operation. Refused on objects of those TensorFlow classes (:data:`TRACED_CLASSES`) only: a Keras model's
#: ``variables`` and ``inputs``, a variable's ``handle``, stay the answer's.
CAPTURE_ATTRIBUTES = frozenset(
    {
        "captured_inputs", "captures", "external_captures", "internal_captures", "function_captures", "variables",
        "trainable_variables", "graph", "op", "inputs", "control_inputs", "consumers", "outer_graph",
        "get_operations", "get_operation_by_name", "get_tensor_by_name", "get_collection", "get_collection_ref",
        "as_graph_element", "variable_captures", "get_concrete_function", "inference_fn", "children", "call_flat",
        "cached_definition", "function_def", "definition", "set_external_captures", "replace_capture",
        "as_graph_def", "graph_def",
    }
)  # fmt: skip
#: TensorFlow's classes of traced functions, graphs, operations and graph tensors (by name, in a module of
#: TensorFlow's own): see :data:`CAPTURE_ATTRIBUTES`.
TRACED_CLASSES = frozenset(
    {"Function", "ConcreteFunction", "AtomicFunction", "Graph", "FuncGraph", "Operation", "SymbolicTensor"}
)


def _traced(obj) -> bool:
    """Whether ``obj`` is one of TensorFlow's traced functions, graphs, operations or graph tensors."""
    return any(
        c.__name__ in TRACED_CLASSES and (c.__module__ or "").startswith("tensorflow.") for c in type(obj).__mro__
    )


_FORMAT_METHODS = frozenset({"format", "format_map"})
#: ``os.path`` is one of these, whichever the platform: an answer may reach it.
PATH_MODULES = frozenset({"posixpath", "ntpath", "genericpath"})

#: Modules none of whose attributes an answer reads, however it reached them (a module reached as another module's
#: attribute must also be one it could import: :meth:`Guards.getattr`).
UNREADABLE_MODULES = (
    "ctypes", "gc", "inspect", "importlib", "builtins", "subprocess", "threading", "_thread", "multiprocessing",
    "signal", "pickle", "marshal", "copyreg", "shelve", "io", "codecs", "string", "operator",
    "tfperf.autograding", "tfperf.classgrading", "tfperf.grading.messages", "numpy.f2py", "numpy.distutils", "numpy.ctypeslib",
)  # fmt: skip


def _unreadable(module_name: str) -> bool:
    return any(module_name == name or module_name.startswith(name + ".") for name in UNREADABLE_MODULES)


class _Stream:
    """``sys.stdout`` and ``sys.stderr`` as an answer sees them: text written and flushed, nothing else of the
    stream (its buffer, its descriptor). It hashes and compares equal to the stream it stands for, so that
    ``tf.print(..., output_stream=sys.stdout)`` (which looks the stream up in a dict of ``sys.stdout`` and
    ``sys.stderr``) prints where the answer asked."""

    def __init__(self, name: str):
        self.name = name

    def _stream(self):
        import sys

        return getattr(sys, self.name)

    def __hash__(self) -> int:
        return hash(self._stream())

    def __eq__(self, other: object) -> bool:
        return other is self._stream() or (isinstance(other, _Stream) and other.name == self.name)

    def write(self, text: str) -> int:
        import sys

        return getattr(sys, self.name).write(text)

    def flush(self) -> None:
        import sys

        getattr(sys, self.name).flush()


def _load_without_pickles(*args, **kwargs):
    """``numpy.load`` as an answer sees it: never a pickle (it would run code)."""
    import numpy as np

    kwargs["allow_pickle"] = False
    return np.load(*args, **kwargs)


#: Attributes of a module that an answer gets in a guarded form: (module, name) -> what it gets.
GUARDED = types.MappingProxyType(
    {
        ("os", "write"): _write_to_a_standard_stream,
        ("sys", "stdout"): _Stream("stdout"),
        ("sys", "stderr"): _Stream("stderr"),
        ("numpy", "load"): _load_without_pickles,
    }
)

#: Builtins an answer does not see: they read or run code, files or the interpreter's state.
WITHHELD_BUILTINS = frozenset(
    {
        "open", "eval", "exec", "compile", "globals", "locals", "vars", "input", "breakpoint", "help", "exit",
        "quit", "memoryview", "copyright", "credits", "license", "__loader__", "__spec__", "__build_class__",
    }
)  # fmt: skip


def _refuse(what: str) -> RestrictedAnswer:
    return RestrictedAnswer(f"{what}: an answer may not do this when it is graded.")


class Guards:
    """The guards of one exercise's answer: what it may import (``imports``, top-level packages) and the library
    functions it may not use (``withheld``, ``alias.attribute`` with the module as the given cells bound it in
    ``namespace``), as the static screen reads them from the instructor's answer cell."""

    def __init__(self, namespace: dict, imports=ALLOWED_IMPORTS, withheld=()):
        self.importable = frozenset(imports)  # what the answer's import statements may import (compiled in)
        self.withheld_names: set[tuple[str, str]] = set()  # (the module's name, attribute)
        for dotted in withheld:
            alias, _, attribute = dotted.rpartition(".")
            if isinstance(namespace.get(alias), types.ModuleType):
                self.withheld_names.add((namespace[alias].__name__, attribute))
        self.classes: weakref.WeakSet = weakref.WeakSet()  # made by the answer: see make_class
        self.formatter = _GuardedFormatter(self)
        self.decided: dict[tuple[str, str], object] = {}  # (module, attribute) -> see module_attribute
        self.reached: dict[str, bool] = {}  # module -> see reachable

    # reads
    def getattr(self, obj, name, *default):
        """``getattr`` as the answer sees it (``_getattr_`` too): no underscore names but the answer's own on its own
        objects and a class's name; none of :data:`UNREADABLE_ATTRIBUTES`; ``str.format`` with its fields read
        through these guards; of a module, only what :meth:`module_attribute` allows. Every attribute the answer's
        code reads comes here: the common case (a public name of an object, a module's function decided before)
        costs a few set lookups."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if name[:1] == "_" and not (name in READABLE_DUNDERS or (_private(name) and self.owns(obj))):
            raise _refuse(f"reading the attribute {name!r}")
        if name in UNREADABLE_ATTRIBUTES:
            raise _refuse(f"reading the attribute {name!r}")
        if name in CAPTURE_ATTRIBUTES and _traced(obj):
            raise _refuse(
                f"reading {name!r} of TensorFlow's {type(obj).__name__}: what it captured is not the answer's"
            )
        if name in _FORMAT_METHODS and (isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str))):
            return self.formatter.method(obj, name)  # its fields read through these guards
        if type(obj) is types.ModuleType:
            return self.module_attribute(obj, name, *default)
        return getattr(obj, name, *default)

    def module_attribute(self, module: types.ModuleType, name: str, *default):
        """``module.name`` for the answer: not of a module it may not read, not withheld, of ``os`` and ``sys`` only
        what :data:`MODULE_ATTRIBUTES` lists (or :data:`GUARDED` gives), and never a module it could not import.
        Decided once per module and name."""
        key = (module.__name__, name)
        decided = self.decided.get(key)
        if decided is None:
            decided = self.decided[key] = self._module_attribute(*key)
        if decided is not True:
            if isinstance(decided, RestrictedAnswer):
                raise decided
            return decided  # its guarded form
        found = getattr(module, name, *default)
        if type(found) is types.ModuleType and not self.reachable(found.__name__):
            raise _refuse(f"reaching the module {found.__name__} through {module.__name__}")
        return found

    def _module_attribute(self, module: str, name: str):
        """True where the answer may read ``module.name``, its guarded form, or the :class:`RestrictedAnswer` why not."""
        if _unreadable(module):
            return _refuse(f"reading {module}.{name}")
        if (module, name) in self.withheld_names:
            return _refuse(f"using {module}.{name}, which this exercise withholds ({WITHHELD_WHY})")
        if (module, name) in GUARDED:
            return GUARDED[module, name]
        allowed = MODULE_ATTRIBUTES.get(module)
        if allowed is not None and name not in allowed:
            return _refuse(f"reading {module}.{name}")
        return True

    def reachable(self, module: str) -> bool:
        """Whether the answer may reach the module named ``module`` (as another module's attribute): one it could
        import, and not one it may not read."""
        if module not in self.reached:
            top = module.partition(".")[0]
            self.reached[module] = not _unreadable(module) and (top in ALLOWED_IMPORTS or top in PATH_MODULES)
        return self.reached[module]

    def owns(self, obj) -> bool:
        """Whether ``obj`` is a class the answer defined, or an object of one."""
        return (isinstance(obj, type) and obj in self.classes) or type(obj) in self.classes

    def own(self, obj):
        """``_own_``: ``obj``, where the answer may set its private attributes (``self._calls = 0``)."""
        if not self.owns(obj):
            raise _refuse(f"setting a private attribute of a {type(obj).__name__}, which the answer did not define")
        return obj

    def hasattr(self, obj, name) -> bool:
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    # writes
    def make_class(self, name, bases, namespace, **keywords):
        """``__metaclass__``: every class statement of restricted code; the class is the answer's own."""
        _check_class_namespace(namespace)
        made = type(name, bases, namespace, **keywords)  # the bases' metaclass where it is a subclass of type
        self.classes.add(made)
        return made

    def write(self, obj):
        """``_write_``: ``obj`` where the answer may change it: not a module, a class it did not define, a function,
        or an object of the course's own classes."""
        if isinstance(obj, types.ModuleType):
            raise _refuse(f"changing the module {obj.__name__}")
        if isinstance(obj, type):
            if obj not in self.classes:
                raise _refuse(f"changing the class {obj.__name__}, which the answer did not define")
            return obj
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            raise _refuse("changing a function's attributes")
        owner = getattr(type(obj), "__module__", "") or ""
        if (owner == "tfperf" or owner.startswith("tfperf.")) and not getattr(type(obj), "ANSWER_FILLS_IN", False):
            raise _refuse(f"changing an object of the course's class {type(obj).__name__}")
        return obj

    def setattr(self, obj, name, value):
        if type(name) is not str or name.startswith("_"):
            raise _refuse(f"setting the attribute {name!r}")
        setattr(self.write(obj), name, value)

    def delattr(self, obj, name):
        if type(name) is not str or name.startswith("_"):
            raise _refuse(f"deleting the attribute {name!r}")
        delattr(self.write(obj), name)

    def builtins(self) -> dict:
        """The builtins the answer's code sees (see the module's docstring)."""
        seen = {name: value for name, value in vars(builtins).items() if name not in WITHHELD_BUILTINS}
        seen.update(
            getattr=self.getattr,
            hasattr=self.hasattr,
            setattr=self.setattr,
            delattr=self.delattr,
            __build_class__=builtins.__build_class__,
            type=GuardedType,
        )
        return seen

    def namespace_entries(self) -> dict:
        """What the exercise's namespace holds for restricted code: the guards and the builtins."""
        return {
            "__builtins__": self.builtins(),
            "__metaclass__": self.make_class,
            "_getattr_": self.getattr,
            "_write_": self.write,
            "_own_": self.own,
            "_getitem_": operator.getitem,
            "_apply_": lambda function, *args, **kwargs: function(*args, **kwargs),
            "_inplacevar_": _inplacevar,
        }


class _GuardedFormatter(string.Formatter):
    """``str.format`` and ``format_map`` as an answer sees them: Python's, but each ``{x.attr}`` or ``{x[key]}`` of a
    field read through the guards (Python's own format reads the attributes it names, however private)."""

    def __init__(self, guards: Guards):
        self.guards = guards

    def get_field(self, field_name, args, kwargs):
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attribute, part in rest:
            obj = self.guards.getattr(obj, part) if is_attribute else obj[part]
        return obj, first

    def method(self, obj, name: str):
        """``obj.format`` or ``obj.format_map``, for a string or for ``str`` itself (``str.format(text, ...)``)."""
        if isinstance(obj, str):
            if name == "format":
                return lambda *args, **kwargs: self.vformat(obj, args, kwargs)
            return lambda mapping: self.vformat(obj, (), mapping)
        if name == "format":
            return lambda text, *args, **kwargs: self.vformat(str(text), args, kwargs)
        return lambda text, mapping: self.vformat(str(text), (), mapping)


#: What a class body may bind besides the answer's own names: what Python itself puts there, and the special methods
#: an answer may define.
CLASS_NAMESPACE = (
    frozenset({"__module__", "__qualname__", "__doc__", "__classcell__", "__annotations__", "__slots__"})
    | frozenset({"__firstlineno__", "__static_attributes__"})  # Python 3.13
    | SPECIAL_METHODS
)


def _check_class_namespace(namespace) -> None:
    for key in namespace:
        if type(key) is not str or (key.startswith("__") and key not in CLASS_NAMESPACE):
            raise _refuse(f"a class with the attribute {key!r}")
        if key == "__annotations__" and not all(type(k) is str and k.isidentifier() for k in namespace[key]):
            raise _refuse("a class annotated with names that are not identifiers")


class _TypeOfType(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, type)

    def __subclasscheck__(cls, other) -> bool:
        return issubclass(other, type)


class GuardedType(type, metaclass=_TypeOfType):
    """``type`` as an answer sees it: ``type(x)`` is Python's; ``type(name, bases, namespace)`` makes a class whose
    namespace binds no special attribute a class statement could not (``__array_interface__``, ``__getattribute__``);
    ``isinstance(c, type)`` is Python's too."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 3:
            _check_class_namespace(args[2])
        return type(*args, **kwargs)


_IN_PLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "<<=": operator.ilshift,
    ">>=": operator.irshift, "|=": operator.ior, "^=": operator.ixor, "&=": operator.iand, "@=": operator.imatmul,
}  # fmt: skip


def _inplacevar(op: str, target, value):
    return _IN_PLACE[op](target, value)


def compile_answer(source: str, filename: str, guards: Guards | None = None) -> tuple[types.CodeType, str]:
    """The answer compiled under :class:`AnswerPolicy` (its import statements checked against ``guards``), and its
    rewritten source (what AutoGraph will read); :class:`RestrictedAnswer` listing what the policy refuses."""
    tree = ast.parse(source, filename)
    errors: list[str] = []
    policy = AnswerPolicy(errors, [], {})
    policy.guards = guards
    policy.visit(tree)
    if errors:
        raise RestrictedAnswer("the answer uses what an answer may not when it is graded: " + "; ".join(errors))
    rewritten = ast.unparse(ast.fix_missing_locations(tree))
    return compile(rewritten, filename, "exec"), rewritten


def run_answer(source: str, filename: str, namespace: dict, *, imports=ALLOWED_IMPORTS, withheld=()) -> None:
    """Run an answer cell in ``namespace`` restricted (:class:`Guards` of ``imports`` and ``withheld``): the guards
    are installed there and stay (the functions the answer made keep using them), the rewritten source goes into
    the line cache under ``filename``."""
    guards = Guards(namespace, imports, withheld)
    code, rewritten = compile_answer(source, filename, guards)
    linecache.cache[filename] = (len(rewritten), None, rewritten.splitlines(keepends=True), filename)
    namespace.update(guards.namespace_entries())
    exec(code, namespace)
