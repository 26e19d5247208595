"""A static screen of answer cells: constructs that have no place in an honest answer.

The checks run in the kernel the answers run in (:mod:`tfperf.grading.guard` notices most
changes to it), but code that keeps a check from running at all, or that changes what a
check reads before the check can look, is best caught before the notebook runs. This screen
reads an answer cell's source (it runs nothing) and reports, with line numbers:

- changing modules or objects from outside: assigning or deleting attributes of imported
  modules (``tf.x = ...``), assigning or deleting private (underscore) attributes of any
  object (``store._reads = 0``, ``x._y += 1``; only ``self._y`` inside a method of a class
  defined in the same cell is allowed), getting a method of such a class through the class or a
  subclass (``Cls.method(other_object)`` would run it on an object of the library), using such a
  class otherwise than by calling it, naming it as a base, in an annotation, in
  ``isinstance``/``issubclass``/``super`` or with an attribute (``Alias = Cls`` would hide it), ``setattr``/
  ``delattr``, ``getattr`` of a private or computed name, ``vars()``/``globals()``, dunder
  attributes (``__dict__``, ``__code__``, ``__globals__``, ...), private names of the course
  library (``host_syncs._patches``, ``tf_data._state``);
- the kernel and the interpreter: ``get_ipython``, ``sys.modules``, ``sys.settrace``,
  ``sys._getframe``, ``importlib``, ``inspect``, ``gc``, ``ctypes``, ``exec``/``eval``/
  ``compile``/``__import__``, ``builtins``;
- the environment and other processes: ``os.environ``, ``os.putenv``, ``os.system``,
  ``os.fork``, the output streams' file descriptors (``os.dup2``, ``os.close``, ...), ``threading``, ``_thread``, ``multiprocessing``, ``subprocess``, ``signal``;
- TensorFlow's global switches (``tf.config.run_functions_eagerly``, ...);
- files outside the working directory (``open`` of an absolute path or one with ``..``);
- redefining a name that a locked cell defines (the given code), or changing an attribute of it
  (``PREDICTOR.predict = slow``);
- the call stack: frames and tracebacks (``tb_frame``, ``f_back``, ``f_locals``, ...); ``memoryview``;
- Keras's own machinery: a class that defines ``make_train_function``, ``fit``, ``predict``, ...; a subclass
  of a library class (any base not defined in the cell) that defines a private method (``_as_serialized_graph``,
  ``_list_all_concrete_functions``, ...);

What an exercise asks the learner to write, or what its checks read, may be withheld: where the instructor's answer
cell lists library functions (its metadata ``tfperf.withheld``, such as ``["dc.regime"]``: :func:`withheld_names`),
an answer that uses one of them (``dc.regime``, ``getattr(dc, "regime")``) or passes their module on as a value
(``m = dc``) is flagged.

Imports are an allow-list, not a deny-list, per exercise: an answer may import only what the instructor's answer
cell lists (its metadata ``tfperf.imports``: :func:`allowed_imports`), by default :data:`ALLOWED_IMPORTS` (what the
honest answers of the course and its corpora import: TensorFlow, NumPy, Keras, a few standard modules; of
``os`` and ``sys`` only what the deny-list above leaves), and may not use IPython's objects
(``get_ipython``, ``In``, ``Out``, ...) at all.

An instructor decides what a finding costs; the course's default (``tfperf.autograding.preprocessors``)
is 0 points for the exercise, with the finding in the feedback.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

#: Names that the notebooks bind to the course library (``tfperf`` modules) before any answer cell,
#: and modules of it an answer could import by name.
LIBRARY_MODULES = (
    "tfperf", "grading", "timing", "device", "sizes", "source", "host_syncs", "traces", "op_counts",
    "gpu_sync", "eg", "td", "kf", "course", "logs", "tf_data", "keras_fit", "copies", "dataset_graph",
    "pipeline_timeline", "plots", "monitor", "widgets", "instrument", "targets", "guard", "dc", "ceilings",
    "predictions", "flops", "bytes_moved", "concepts", "cs", "profile_analysis", "registry", "bod", "replicas",
    "servers", "cluster",
)  # fmt: skip
#: Names that the notebooks bind to modules before any answer cell.
NOTEBOOK_MODULES = (
    "tf",
    "np",
    "keras",
    "plt",
    *(m for m in LIBRARY_MODULES if m not in {"instrument", "targets", "guard"}),
)

#: Modules the setup cell binds (``import os, sys, pathlib``): an answer may use them, not change them.
SETUP_MODULES = ("os", "sys", "pathlib")
#: What an answer may import (top-level packages): everything else is flagged, whatever it is.
ALLOWED_IMPORTS = (
    "numpy", "tensorflow", "keras", "math", "functools", "itertools", "collections", "dataclasses", "typing",
    "statistics", "time", "random", "warnings", "tempfile", "pathlib", "os", "sys", "tfperf",
)  # fmt: skip
#: Names IPython binds (and builtins) that no answer needs: an answer that reads them is flagged.
FORBIDDEN_NAMES = {
    "get_ipython", "In", "Out", "_ih", "_oh", "_dh", "_i", "_ii", "_iii", "exit", "quit",
    "memoryview", "__builtins__", "__loader__", "__spec__",
}  # fmt: skip
#: Attributes of frames, tracebacks, generators and coroutines: the call stack, and every caller's variables.
FRAME_ATTRIBUTES = {
    "tb_frame", "tb_next", "tb_lasti", "f_back", "f_locals", "f_globals", "f_builtins", "f_code", "f_lineno",
    "f_trace", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code",
}  # fmt: skip
#: Keras methods that run the training and prediction: an answer's class must not define its own.
KERAS_MACHINERY = {
    "make_train_function", "make_test_function", "make_predict_function", "fit", "evaluate", "predict",
    "train_on_batch", "test_on_batch", "predict_on_batch", "compile",
}  # fmt: skip
#: ``module.attribute`` uses that are flagged (the rest of ``os`` and ``sys`` is fine).
FLAGGED_ATTRIBUTES = {
    "os": {
        "environ",
        "putenv",
        "unsetenv",
        "system",
        "fork",
        "forkpty",
        "kill",
        "popen",
        "execv",
        "execve",
        "execvp",
        "spawnv",
        "_exit",
        "chdir",
        "symlink",
        "link",
        "mkfifo",
        "mknod",
        "dup",
        "dup2",
        "close",
        "closerange",
        "pipe",
        "openpty",
    },
    "sys": {
        "modules",
        "settrace",
        "setprofile",
        "_getframe",
        "_current_frames",
        "meta_path",
        "path_hooks",
        "exit",
        "setrecursionlimit",
        "addaudithook",
        "displayhook",
        "excepthook",
        "breakpointhook",
        "unraisablehook",
        "monitoring",
        "call_tracing",
        "exc_info",
        "last_traceback",
        "last_value",
        "last_exc",
    },  # fmt: skip
}
FLAGGED_CALLS = {
    "setattr",
    "delattr",
    "vars",
    "globals",
    "locals",
    "exec",
    "eval",
    "compile",
    "__import__",
    "get_ipython",
    "breakpoint",
}
#: TensorFlow switches that change how every function runs.
FLAGGED_TF_CONFIG = {
    "run_functions_eagerly",
    "set_synchronous_execution",
    "set_jit",
    "enable_op_determinism",
    "set_visible_devices",
    "set_logical_device_configuration",
    "enable_tensor_float_32_execution",
}
ALLOWED_DUNDERS = {
    "__init__",
    "__call__",
    "__name__",
    "__doc__",
    "__len__",
    "__iter__",
    "__next__",
    "__enter__",
    "__exit__",
    "__repr__",
    "__str__",
    "__eq__",
    "__hash__",
}


@dataclass(frozen=True)
class Finding:
    """One construct the screen flagged: where, and why."""

    line: int
    what: str

    def describe(self) -> str:
        return f"line {self.line}: {self.what}"


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Screen(ast.NodeVisitor):
    def __init__(
        self, given_names: Iterable[str], allowed_imports: Iterable[str] = ALLOWED_IMPORTS, withheld: Iterable[str] = ()
    ):
        self.allowed_imports = tuple(allowed_imports)
        self.withheld: dict[str, set[str]] = {}  # module name -> its attributes the answer may not use
        for dotted in withheld:
            module, _, attribute = dotted.rpartition(".")
            self.withheld.setdefault(module, set()).add(attribute)
        self.attribute_bases: set[int] = set()  # ids of the Name nodes that are the module of an attribute
        self.findings: list[Finding] = []
        self.given = set(given_names)
        self.modules: dict[str, str] = {}  # local name -> module it is bound to
        self.receivers: frozenset[str] = frozenset()  # names that are the instance of a class of this cell (self)
        self.classes: dict[str, set[str]] = {}  # class of this cell -> its plain (instance) methods, inherited too
        self.class_uses: set[int] = set()  # ids of the Name nodes where such a class is used as it may be
        self.depth = 0  # functions and class bodies around the node visited: names bound there are not the cell's

    def flag(self, node: ast.AST, what: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 0), what))

    # Imports: remember module names; flag forbidden modules.
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.modules[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
            self._allowed_import(node, alias.name)
            self._private_import(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._allowed_import(node, module or ".")
        for alias in node.names:
            self.modules[alias.asname or alias.name] = f"{module}.{alias.name}"
            if module.split(".")[0] in ("os", "sys") and alias.name in FLAGGED_ATTRIBUTES[module.split(".")[0]]:
                self.flag(node, f"imports {module}.{alias.name}")
            if alias.name.startswith("_"):
                self.flag(node, f"imports the private name {alias.name} from {module}")
            self._private_import(node, f"{module}.{alias.name}")

    def _allowed_import(self, node: ast.AST, dotted: str) -> None:
        if dotted.split(".")[0] not in self.allowed_imports:
            allowed = ", ".join(self.allowed_imports) or "nothing"
            self.flag(node, f"imports {dotted}, which no answer to this exercise needs (its answers import {allowed})")

    def _private_import(self, node: ast.AST, dotted: str) -> None:
        if dotted.startswith("tfperf") and any(part.startswith("_") for part in dotted.split(".")):
            self.flag(node, f"imports a private part of the course library ({dotted})")

    # Assignments to attributes of modules, and to given names.
    def _target(self, target: ast.AST, node: ast.AST, verb: str, local: bool = False) -> None:
        """Flag an assignment to ``target``. A name bound inside a function, a class body or (``local``) a
        comprehension's own variable is not one a locked cell defines, even where it is spelled the same: only the
        cell's top level (and ``global``, flagged on its own) rebinds those."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, node, verb, local)
        elif isinstance(target, ast.Attribute):
            base = _dotted(target.value)
            root = base.split(".")[0] if base else None
            if root in self.modules or root in NOTEBOOK_MODULES or root in SETUP_MODULES:
                self.flag(node, f"{verb} {base}.{target.attr}, an attribute of a module")
            elif root in self.given:
                self.flag(node, f"{verb} {base}.{target.attr}, an attribute of {root}, which a locked cell defines")
            elif target.attr.startswith("_") and not (
                isinstance(target.value, ast.Name) and target.value.id in self.receivers
            ):
                self.flag(
                    node,
                    f"{verb} {_dotted(target) or '...' + '.' + target.attr}, a private attribute of "
                    f"an object (only self._x inside a class of this cell may be set)",
                )
        elif isinstance(target, ast.Subscript):
            base = _dotted(target.value)
            if base and (base.endswith("environ") or base.endswith("modules") or base.endswith("__dict__")):
                self.flag(node, f"{verb} an item of {base}")
        elif isinstance(target, ast.Name) and target.id in self.given and not (local or self.depth):
            self.flag(node, f"redefines {target.id}, which a locked cell defines")
        elif isinstance(target, ast.Name) and target.id in self.receivers:
            self.flag(node, f"rebinds {target.id}, the object whose private attributes a method may set")
        elif isinstance(target, ast.Starred):
            self._target(target.value, node, verb, local)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node, "assigns")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node, "assigns")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target, node, "assigns")
        self.generic_visit(node)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._target(node.target, node, "assigns")
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._target(node.target, node.iter, "assigns", local=True)
        self.generic_visit(node)

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self._target(node.optional_vars, node.context_expr, "assigns")
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._target(node.target, node, "assigns")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target, node, "deletes")
        self.generic_visit(node)

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        if node.name in self.given and not self.depth:
            self.flag(node, f"redefines {node.name}, which a locked cell defines")

    def _allow_class_use(self, node: ast.AST | None) -> None:
        """The classes of this cell named in ``node`` (a base, an annotation, ...) are used as they may be."""
        if node is not None:
            self.class_uses |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in self.classes}

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._definition(node)
        methods = set()
        library_base = None  # a base that is not a class of this cell (nor object): TensorFlow's, Keras's, ...
        for base in node.bases:
            self._allow_class_use(base)
            if isinstance(base, ast.Name) and base.id in self.classes:
                methods |= self.classes[base.id]  # Sub.method(obj) runs the base's method on obj
            elif not (isinstance(base, ast.Name) and base.id == "object"):
                library_base = library_base or ast.unparse(base)
        for item in node.decorator_list + node.bases + node.keywords:
            self.visit(item)
        self.depth += 1
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decorators = {_dotted(d) for d in item.decorator_list}
                if "staticmethod" in decorators:
                    self._function(item)
                    continue
                if item.name in KERAS_MACHINERY:
                    self.flag(item, f"defines {item.name} in class {node.name}: Keras's own {item.name} must run")
                elif library_base and item.name.startswith("_") and not item.name.endswith("__"):
                    self.flag(
                        item,
                        f"defines {item.name} in class {node.name}, a subclass of {library_base}: the private "
                        f"methods of a library class are its own (what a check reads through them must be true)",
                    )
                if "classmethod" not in decorators:
                    methods.add(item.name)
                positional = item.args.posonlyargs + item.args.args
                self._function(item, receiver=positional[0].arg if positional else None)
            else:
                if isinstance(item, ast.Assign) and isinstance(item.value, ast.Name) and item.value.id in methods:
                    methods |= {t.id for t in item.targets if isinstance(t, ast.Name)}  # an alias of a method
                self.visit(item)
        self.depth -= 1
        self.classes[node.name] = methods

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, receiver: str | None = None) -> None:
        """Visit a function. In a method, ``receiver`` (its first parameter: the instance, or the class)
        may have its private attributes set; in a nested function, so may the enclosing method's
        receiver, unless a parameter of the same name rebinds it."""
        args = node.args
        for argument in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            self._allow_class_use(getattr(argument, "annotation", None))
        self._allow_class_use(getattr(node, "returns", None))
        if not isinstance(node, ast.Lambda):
            self._definition(node)
            for decorator in node.decorator_list:
                self.visit(decorator)
            if node.returns is not None:
                self.visit(node.returns)
        own = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        own |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        self.visit(args)
        saved = self.receivers
        self.receivers = frozenset({receiver}) if receiver else frozenset(saved - own)
        self.depth += 1
        for item in node.body if isinstance(node.body, list) else [node.body]:
            self.visit(item)
        self.depth -= 1
        self.receivers = saved

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._function(node)

    # Calls, attributes and names.
    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        self._allow_class_use(node.func if isinstance(node.func, ast.Name) else None)  # Cls(...): an instance
        if isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass", "super"):
            for argument in node.args:
                self._allow_class_use(argument)
        if isinstance(node.func, ast.Name) and node.func.id in FLAGGED_CALLS:
            self.flag(node, f"calls {node.func.id}()")
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
            attribute = node.args[1]
            if not (isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)):
                self.flag(node, "calls getattr() with a computed attribute name")
            elif attribute.value.startswith("_"):
                self.flag(node, f"calls getattr() for the private attribute {attribute.value}")
            target = node.args[0]
            named = isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)
            if named and isinstance(target, ast.Name) and attribute.value in self.withheld.get(target.id, ()):
                self._withheld(node, f"{target.id}.{attribute.value}")
        if name and name.split(".")[-1] in FLAGGED_TF_CONFIG and ".config" in name:
            self.flag(node, f"changes a TensorFlow switch ({name})")
        if isinstance(node.func, ast.Name) and node.func.id == "open" and node.args:
            path = node.args[0]
            if isinstance(path, ast.Constant) and isinstance(path.value, str):
                if path.value.startswith(("/", "~")) or ".." in path.value.split("/"):
                    self.flag(node, f"opens a file outside the working directory ({path.value})")
            else:
                self.flag(node, "opens a file whose path is computed")
        self.generic_visit(node)

    def _withheld(self, node: ast.AST, dotted: str) -> None:
        self.flag(node, f"uses {dotted}, which this exercise withholds ({WITHHELD_WHY})")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._type_attribute(node)
        if isinstance(node.value, ast.Name) and node.value.id in self.withheld:
            self.attribute_bases.add(id(node.value))
            if node.attr in self.withheld[node.value.id]:
                self._withheld(node, f"{node.value.id}.{node.attr}")
        if isinstance(node.value, ast.Name) and node.attr != "mro":
            self._allow_class_use(node.value)  # Cls.attr: its plain methods are flagged below; Cls.mro() is Cls
        if node.attr.startswith("__") and node.attr.endswith("__") and node.attr not in ALLOWED_DUNDERS:
            self.flag(node, f"uses the attribute {node.attr}")
        if node.attr in FRAME_ATTRIBUTES:
            self.flag(node, f"uses {node.attr}, a part of the call stack")
        base = _dotted(node.value)
        if base:
            module = self.modules.get(base.split(".")[0], base.split(".")[0])
            root = module.split(".")[0]
            if root in FLAGGED_ATTRIBUTES and base == base.split(".")[0] and node.attr in FLAGGED_ATTRIBUTES[root]:
                self.flag(node, f"uses {root}.{node.attr}")
            if (
                (module.startswith("tfperf") or base.split(".")[0] in LIBRARY_MODULES)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                self.flag(node, f"uses {base}.{node.attr}, a private part of the course library")
            if base in self.classes and node.attr in self.classes[base]:
                self.flag(
                    node,
                    f"gets the method {base}.{node.attr} through its class (it would run on any object passed as self)",
                )
        self.generic_visit(node)

    def _type_attribute(self, node: ast.Attribute) -> None:
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "type"
            and len(value.args) == 1
            and not (node.attr.startswith("__") and node.attr.endswith("__"))
        ):
            self.flag(node, f"gets {node.attr} through type(...) (a method taken from the class runs on any object)")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES and isinstance(node.ctx, ast.Load):
            self.flag(node, f"uses {node.id}, which no answer needs")
        if node.id in self.withheld and id(node) not in self.attribute_bases:
            self.flag(node, f"uses {node.id} otherwise than by one of its attributes (some of them are withheld here)")
        if isinstance(node.ctx, ast.Load) and node.id in self.classes and id(node) not in self.class_uses:
            self.flag(
                node,
                f"passes the class {node.id} on as a value (an alias of it, or getattr on it, would "
                f"run its methods on any object)",
            )
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            if name in self.given:
                self.flag(node, f"rebinds {name}, which a locked cell defines, through 'global'")


def screen(
    source: str,
    *,
    given_names: Iterable[str] = (),
    allowed_imports: Iterable[str] = ALLOWED_IMPORTS,
    withheld: Iterable[str] = (),
) -> list[Finding]:
    """What in one answer cell's ``source`` has no place in an honest answer (empty when nothing).

    ``given_names`` are the names that locked cells define; ``allowed_imports`` the top-level packages the
    exercise's answers may import (:func:`allowed_imports`); ``withheld`` the library functions they may not use
    (:func:`withheld_names`). Source that does not parse is not flagged here: running it reports the error.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python that runs
        return []
    visitor = _Screen(given_names, allowed_imports, withheld)
    visitor.visit(tree)
    unique = {(f.line, f.what): f for f in visitor.findings}
    return sorted(unique.values(), key=lambda f: (f.line, f.what))


def allowed_imports(instructor_cell) -> tuple[str, ...]:
    """What the answers of an exercise may import: the instructor's answer cell lists it (its metadata
    ``tfperf.imports``, top-level packages), else :data:`ALLOWED_IMPORTS`."""
    listed = (instructor_cell.get("metadata", {}).get("tfperf") or {}).get("imports")
    if isinstance(listed, list) and all(isinstance(name, str) for name in listed):
        return tuple(listed)
    return ALLOWED_IMPORTS


#: Why an exercise withholds a library function, as its findings say: what the learner is asked to write, or what the
#: exercise's checks read (chapter 5's ``gpu_sync.steps_run``, the count of training steps its checks of the reports'
#: timing read).
WITHHELD_WHY = "what the exercise asks you to write, or what its checks read"


def withheld_names(instructor_cell) -> tuple[str, ...]:
    """The library functions an exercise's answers may not use (``module.attribute``, the module as the notebook
    binds it): the instructor's answer cell lists them in its metadata ``tfperf.withheld``; none by default."""
    listed = (instructor_cell.get("metadata", {}).get("tfperf") or {}).get("withheld")
    if isinstance(listed, list) and all(isinstance(name, str) and "." in name for name in listed):
        return tuple(listed)
    return ()


def defined_names(source: str) -> set[str]:
    """The top-level names a (locked) cell defines: functions, classes and assigned names."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python that runs
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


__all__ = ["Finding", "allowed_imports", "defined_names", "screen", "withheld_names"]
