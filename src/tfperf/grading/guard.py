"""Refuse to grade in a kernel whose grading, timing, counting or TensorFlow state was changed.

Learner code runs in the kernel the checks run in. :func:`arm` (called by the setup
cell, through :func:`tfperf.course.start`, before any learner code) takes a snapshot of
what the checks rely on; every check calls :func:`verify` when it starts and when it
ends, and fails with "The grading environment was modified: ..." when the kernel no
longer matches the snapshot:

- the functions and classes of the course library, TensorFlow, Keras, NumPy, ``time``
  and ``builtins`` (module attributes, and the methods of their classes);
- TensorFlow's global switches (``tf.config.run_functions_eagerly``, synchronous
  execution, XLA auto-clustering, op determinism), Python's trace and profile hooks,
  the ``TFPERF_``/``TF_``/``CUDA_`` environment variables, IPython's input and AST
  transformers, and the throughput targets (IPython's event callbacks are left alone:
  plotting libraries register theirs; what a callback changes is seen when a check starts);
- the given code that a locked cell registered with :func:`given` (the functions, and
  every global name they use; the same cell run again is no change);
- while code is being timed: no thread started since :func:`arm` other than the
  library's own and the Jupyter kernel's (its subshells, while idle), and no child process
  but the library's tf.data service servers (:func:`assert_nothing_competes`).

What it cannot see is said in docs/instructors.md: code that never lets a check run,
and changes to parts of TensorFlow written in C++.
"""

from __future__ import annotations

import builtins
import copy
import dis
import functools
import linecache
import operator
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tfperf.grading import targets
from tfperf.grading.calls import GradingFailure

#: Modules (and their submodules) whose functions and classes the checks rely on.
GUARDED_PREFIXES = ("tfperf", "tensorflow", "keras", "numpy", "time", "builtins", "threading", "statistics")
#: Environment variables that change what a check measures or expects.
GUARDED_ENV_PREFIXES = ("TFPERF_", "TF_", "CUDA_")
#: Attributes that their owners replace on their own: ipykernel sets ``builtins.input`` for
#: every cell it runs (to forward stdin to the front end).
UNGUARDED_ATTRIBUTES = {("builtins", "input")}
#: Threads a check tolerates while it times code: the library's own samplers.
LIBRARY_THREAD_PREFIX = "tfperf-"
#: How :func:`competitors` names a kernel subshell that is handling a widget's message.
WIDGET_CALLBACK = "a widget's callback"

_CALLABLE_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    type,
    classmethod,
    staticmethod,
    property,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.GetSetDescriptorType,
)


def _tracked(value: Any) -> bool:
    return isinstance(value, _CALLABLE_TYPES) or (callable(value) and not isinstance(value, types.ModuleType))


def _guarded(name: str) -> bool:
    return name.partition(".")[0] in GUARDED_PREFIXES  # each prefix is a top-level package


@dataclass
class _Given:
    """A function a locked cell defined, the globals it used then, and the code of the cell that registered it."""

    name: str
    fn: Any
    code: Any
    defaults: Any
    namespace: dict
    names: dict[str, Any]
    cell: str | types.CodeType | None = None


@dataclass
class _Snapshot:
    # every tracked attribute as its owner's live namespace's get, its name, its value and its owner's name, in four
    # lists that _differences compares in one pass
    lookups: list[Callable[[str], Any]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    owner_names: list[str] = field(default_factory=list)
    owners: dict[int, tuple[str, Any]] = field(default_factory=dict)  # id -> (name, module or class)
    modules: dict[str, Any] = field(default_factory=dict)  # sys.modules entries
    # guarded module name -> (the module, how many names it had) when _learn_new_modules last looked for classes
    scanned: dict[str, tuple[Any, int]] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    threads: set[int] = field(default_factory=set)
    children: set[int] = field(default_factory=set)
    given: dict[str, _Given] = field(default_factory=dict)
    suspicious: set[str] = field(default_factory=set)


_snapshot: _Snapshot | None = None
_lock = threading.RLock()


def _guarded_modules() -> Iterator[tuple[str, types.ModuleType]]:
    """Every guarded module loaded now."""
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType) and _guarded(name):
            yield name, module


def _classes_of(name: str, module: types.ModuleType) -> Iterator[tuple[str, type]]:
    """Every class defined in the module ``name``, by its full name."""
    for value in list(vars(module).values()):
        if isinstance(value, type) and getattr(value, "__module__", None) == name:
            yield f"{name}.{value.__qualname__}", value


def _owners() -> Iterator[tuple[str, Any]]:
    """Every guarded module loaded now, and every class defined in one of them."""
    for name, module in _guarded_modules():
        yield name, module
        yield from _classes_of(name, module)


def _record(snapshot: _Snapshot, owner_name: str, owner: Any) -> None:
    snapshot.owners[id(owner)] = (owner_name, owner)
    if isinstance(owner, types.ModuleType):
        snapshot.modules[owner_name] = owner
    tracked = [
        (attr, value)
        for attr, value in list(vars(owner).items())
        if _tracked(value) and (owner_name, attr) not in UNGUARDED_ATTRIBUTES
    ]
    # a module's namespace is its __dict__, a class's a live view of its own: neither can be replaced
    snapshot.lookups += [vars(owner).get] * len(tracked)
    snapshot.names += [a for a, _ in tracked]
    snapshot.values += [v for _, v in tracked]
    snapshot.owner_names += [owner_name] * len(tracked)


def _remember_scanned(snapshot: _Snapshot) -> None:
    """Note how many names each guarded module has now: :func:`_learn_new_modules` looks again where that changed."""
    for name, module in _guarded_modules():
        snapshot.scanned[name] = (module, len(vars(module)))


def _global_state() -> dict[str, Any]:
    state: dict[str, Any] = {
        "sys.gettrace()": sys.gettrace(),
        "sys.getprofile()": sys.getprofile(),
        "threading trace hook": getattr(threading, "_trace_hook", None),
        "threading profile hook": getattr(threading, "_profile_hook", None),
        "targets": copy.deepcopy(targets.load()),
    }
    state |= {f"${k}": v for k, v in os.environ.items() if k.startswith(GUARDED_ENV_PREFIXES)}
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        from tensorflow.python.eager import context
        from tensorflow.python.framework import config

        state["tf.config.functions_run_eagerly()"] = tf.config.functions_run_eagerly()
        state["tf.config.experimental synchronous execution"] = context.context().execution_mode
        state["tf.config.optimizer.get_jit()"] = tf.config.optimizer.get_jit()
        state["tf.config.experimental.enable_op_determinism"] = config.is_op_determinism_enabled()
    shell = _ipython()
    if shell is not None:
        for hooks in ("input_transformers_cleanup", "input_transformers_post", "ast_transformers"):
            state[f"IPython {hooks}"] = [id(h) for h in getattr(shell, hooks, [])]
    return state


def _ipython():
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def arm() -> None:
    """Take the snapshot the checks compare against. Call before any learner code runs."""
    global _snapshot
    with _lock:
        snapshot = _Snapshot()
        with _suppress_import_noise():
            import tensorflow  # noqa: F401 (loaded now so that it is in the snapshot)

            try:
                import keras  # noqa: F401
            except ImportError:
                pass
            import_course_modules()
        for owner_name, owner in _owners():
            _record(snapshot, owner_name, owner)
        _remember_scanned(snapshot)
        snapshot.state = _global_state()
        snapshot.threads = {t.ident for t in threading.enumerate()}
        snapshot.children = set(_children())
        _snapshot = snapshot
        _seal_course_modules()


class _SealedModule(types.ModuleType):
    """A course module whose attributes cannot be assigned or deleted from outside it."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"{self.__name__}.{name} is part of the course's grading and cannot be changed in a graded notebook."
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(
            f"{self.__name__}.{name} is part of the course's grading and cannot be deleted in a graded notebook."
        )


def _seal_course_modules() -> None:
    """Refuse ``tfperf.x.y = ...`` in every loaded course module (a first line of defence: :func:`verify`
    still compares everything, since a module's ``__dict__`` can be written directly)."""
    for name, module in list(sys.modules.items()):
        if (name == "tfperf" or name.startswith("tfperf.")) and type(module) is types.ModuleType:
            module.__class__ = _SealedModule


def _unseal_course_modules() -> None:
    for module in list(sys.modules.values()):
        if type(module) is _SealedModule:
            object.__setattr__(module, "__class__", types.ModuleType)


#: Course modules not loaded by :func:`arm`: the command line and the layers above ``grading`` (nbgrader's
#: side, class grading, contributors' tools). No check uses them (tests/unit/test_layers.py), so a kernel
#: never needs them; loading them imported nbgrader and nbconvert into every kernel, seconds per notebook.
NOT_PRELOADED = ("tfperf.__main__", "tfperf.cli", "tfperf.autograding", "tfperf.classgrading", "tfperf.authoring")


def import_course_modules() -> None:
    """Load every course module now, so that a notebook that imports one later gets the pristine one:
    a module first seen after learner code ran could already have been changed."""
    import importlib
    import pkgutil

    import tfperf

    for info in pkgutil.walk_packages(tfperf.__path__, "tfperf."):
        if info.name.startswith(NOT_PRELOADED):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional dependency missing: that module cannot be used anyway
            pass


def _suppress_import_noise():
    from tfperf.runtime import logs

    return logs.captured_stderr()


def is_armed() -> bool:
    return _snapshot is not None


def given(*functions: Callable[..., Any]) -> None:
    """Register functions a locked cell defines: checks fail if they, or a name they use, change later.

    The first registration of a name stands. The same cell run again registers its new functions in place of the
    old ones: it is recognized by its source (:func:`_cell_of`), and every name the functions use that the cell does
    not itself define must still be what it was. Registering the name
    from other code, or with other code, counts as a change. Names the functions use must not shadow a builtin or
    stand for a fake of a library module already when they are registered.
    """
    if _snapshot is None:
        return
    cell = _cell_of(sys._getframe(1))
    for fn in functions:
        python_fn = getattr(fn, "python_function", fn)
        code = getattr(python_fn, "__code__", None)
        namespace = getattr(python_fn, "__globals__", {})
        name = getattr(python_fn, "__name__", repr(fn))
        if isinstance(fn, type):  # a class: its methods' globals and the names they read
            methods = [m for m in vars(fn).values() if isinstance(m, types.FunctionType)]
            namespace = methods[0].__globals__ if methods else vars(sys.modules.get(fn.__module__, types))
            code = types.SimpleNamespace(methods=[m.__code__ for m in methods])
        names = {n: namespace[n] for n in _global_names(code) if n in namespace}
        known = _snapshot.given.get(name)
        if known is not None:
            if known.fn is not fn:
                changed = _changed_by_running_again(known, fn, namespace, names, cell)
                if changed:
                    _snapshot.suspicious.update(changed)
                else:
                    _snapshot.given[name] = _Given(
                        name, fn, code, getattr(python_fn, "__defaults__", None), namespace, names, cell
                    )
            continue
        for n, value in names.items():
            if n in vars(builtins) and value is not vars(builtins)[n]:
                _snapshot.suspicious.add(f"{n} (a builtin, redefined before the given {name})")
            if isinstance(value, types.ModuleType) and sys.modules.get(value.__name__) is not value:
                _snapshot.suspicious.add(f"{n} (not the module {value.__name__} that the given {name} expects)")
        _snapshot.given[name] = _Given(name, fn, code, getattr(python_fn, "__defaults__", None), namespace, names, cell)


def _cell_of(frame: types.FrameType) -> str | types.CodeType | None:
    """What identifies the cell that called :func:`given`: its whole source where Python's line cache holds it under
    the caller's file name (IPython keeps every cell there, and compiles each top-level statement of a cell on its
    own, so the caller's code is one statement), else the caller's code (a cell run whole, as the grading's workers
    run them); None for a call from inside a function."""
    code = frame.f_code
    if code.co_name != "<module>":  # a cell's code runs as a module's
        return None
    lines = linecache.getlines(code.co_filename)
    return "".join(lines) if lines else code


def _changed_by_running_again(
    known: _Given, fn: Any, namespace: dict, names: dict[str, Any], cell: str | types.CodeType | None
) -> list[str]:
    """Why registering ``fn`` again is a change, or nothing where the given cell was run again as it is."""
    twice = [f"{known.name} (registered as given code twice)"]
    if cell is None or known.cell is None or cell != known.cell or namespace is not known.namespace:
        return twice
    if not _same_definition(known.fn, fn):
        return twice
    defined_by_the_cell = _names_stored(cell)
    return [
        f"{n} (used by the given {known.name}, then redefined)"
        for n, value in known.names.items()
        if n not in defined_by_the_cell and not _same_definition(value, names.get(n, _MISSING))
    ]


_MISSING = object()


def _same_definition(a: Any, b: Any) -> bool:
    """Whether ``b`` is ``a``, or a function or class defined by the same code (a cell run again defines new objects
    from the same code: code objects compare their bytecode, constants, names and line numbers)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, type):
        same_names = (
            a.__qualname__ == b.__qualname__ and a.__bases__ == b.__bases__ and vars(a).keys() == vars(b).keys()
        )
        return same_names and all(
            _same_definition(value, vars(b)[key])
            for key, value in vars(a).items()
            if isinstance(value, (types.FunctionType, classmethod, staticmethod, property))
        )
    fa, fb = getattr(a, "python_function", a), getattr(b, "python_function", b)
    if isinstance(fa, (classmethod, staticmethod)):
        fa, fb = fa.__func__, fb.__func__
    if isinstance(fa, property):
        return all(_same_definition(x, y) for x, y in ((fa.fget, fb.fget), (fa.fset, fb.fset), (fa.fdel, fb.fdel)))
    if not (isinstance(fa, types.FunctionType) and isinstance(fb, types.FunctionType)):
        return False
    try:
        return bool(
            fa.__code__ == fb.__code__
            and fa.__globals__ is fb.__globals__
            and fa.__closure__ is None
            and fb.__closure__ is None
            and fa.__defaults__ == fb.__defaults__
            and fa.__kwdefaults__ == fb.__kwdefaults__
        )
    except Exception:  # defaults whose comparison is not a plain truth value (arrays): not provably the same
        return False


def _names_stored(cell: str | types.CodeType) -> set[str]:
    """The global names a cell (its source or its code) assigns: definitions, imports and assignments at its top
    level."""
    if isinstance(cell, str):
        try:
            cell = compile(cell, "<cell>", "exec")
        except SyntaxError:
            return set()
    return {i.argval for i in dis.get_instructions(cell) if i.opname in ("STORE_NAME", "STORE_GLOBAL")}


def is_given(fn: Any) -> bool:
    """Whether ``fn`` was registered by :func:`given` (always true when the guard is not armed)."""
    if _snapshot is None:
        return True
    return any(g.fn is fn for g in _snapshot.given.values())


def _global_names(code: Any) -> set[str]:
    """The global names a code object (and the functions nested in it) reads."""
    if code is None:
        return set()
    if isinstance(code, types.SimpleNamespace):  # a class's methods
        return set().union(*(_global_names(c) for c in code.methods))
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _differences(snapshot: _Snapshot) -> list[str]:
    found = list(snapshot.suspicious)
    # Every tracked attribute compared by identity in one pass of C-level maps (a missing one reads None: tracked
    # values are callables); then one by one, only to name what differs. With TensorFlow, Keras and the course
    # loaded (about 73,000 attributes), a verify took 34-47 ms on a 2-core AMD EPYC, against 114-121 ms compared
    # one by one in Python and every module's names scanned each time (docs/measurements-grading.md, sixth pass).
    now = map(operator.call, snapshot.lookups, snapshot.names)
    if not all(map(operator.is_, now, snapshot.values)):
        everything = zip(snapshot.lookups, snapshot.names, snapshot.values, snapshot.owner_names)
        found += [f"{owner}.{name}" for get, name, value, owner in everything if get(name) is not value]
    for name, module in snapshot.modules.items():
        if sys.modules.get(name) is not module:
            found.append(f"sys.modules[{name!r}]")
    state = _global_state()
    for key in snapshot.state.keys() | state.keys():
        if snapshot.state.get(key) != state.get(key):
            found.append(key if not key.startswith("$") else f"the environment variable {key[1:]}")
    for g in snapshot.given.values():
        if g.namespace.get(g.name) is not g.fn:
            found.append(f"{g.name} (defined by a given cell, then redefined)")
            continue
        python_fn = getattr(g.fn, "python_function", g.fn)
        if isinstance(g.code, types.SimpleNamespace):  # a class: its methods' code
            now = [m.__code__ for m in vars(g.fn).values() if isinstance(m, types.FunctionType)]
            replaced = len(now) != len(g.code.methods) or any(a is not b for a, b in zip(now, g.code.methods))
        else:
            replaced = (
                getattr(python_fn, "__code__", None) is not g.code
                or getattr(python_fn, "__defaults__", None) != g.defaults
            )
        if replaced:
            found.append(f"{g.name} (its code was replaced)")
        for n, value in g.names.items():
            if g.namespace.get(n, None) is not value:
                found.append(f"{n} (used by the given {g.name}, then redefined)")
    return sorted(set(found))


def _learn_new_modules(snapshot: _Snapshot) -> None:
    """Modules first imported after :func:`arm` are taken as they are when first seen, and so are classes that
    appear in a guarded module under a new name. A module with as many names as when last looked at is not looked at
    again: what that can miss is a class defined under a new name in the same moment as another name is deleted
    (a deleted callable is a difference by itself)."""
    for name, module in _guarded_modules():
        last = snapshot.scanned.get(name)
        if last is not None and last[0] is module and last[1] == len(vars(module)):
            continue
        for owner_name, owner in ((name, module), *_classes_of(name, module)):
            if id(owner) not in snapshot.owners and owner_name not in snapshot.modules:
                _record(snapshot, owner_name, owner)
        snapshot.scanned[name] = (module, len(vars(module)))


def accept(attributes: list[tuple[Any, str]]) -> None:
    """Take ``(owner, name)`` attributes as they are now: wrappers that the library installed for good after
    :func:`arm` and before any learner code (:func:`tfperf.measure.host_syncs.keep_installed`, in a grading worker)."""
    with _lock:
        if _snapshot is None:
            return
        names = {(_snapshot.owners[id(owner)][0], name) for owner, name in attributes if id(owner) in _snapshot.owners}
        for index, (get, name, owner_name) in enumerate(zip(_snapshot.lookups, _snapshot.names, _snapshot.owner_names)):
            if (owner_name, name) in names:
                _snapshot.values[index] = get(name)


def verify(what: str = "This check") -> None:
    """Fail with a clear message if the grading environment differs from the snapshot."""
    with _lock:
        if _snapshot is None:
            return
        _learn_new_modules(_snapshot)
        _seal_course_modules()
        found = _differences(_snapshot)
    if found:
        shown = ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
        raise GradingFailure(
            f"{what} cannot grade: the grading environment was modified ({shown}). Answers must not change "
            f"the course library, TensorFlow, NumPy, the given code or the kernel's settings: remove the code "
            f"that does it, restart the kernel and run the notebook again from the top."
        )


def checked(check: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a public check: :func:`verify` before it runs and after it returns."""

    @functools.wraps(check)
    def run_check(*args: Any, **kwargs: Any) -> Any:
        verify("This check")
        result = check(*args, **kwargs)
        verify("This check")
        return result

    return run_check


def _kernel_messaging_thread() -> threading.Thread | None:
    """pyzmq's garbage-collector thread, which the Jupyter kernel's messaging starts by itself the first
    time it sends a large output without copying it (a plot, say): not the notebook's work.

    Only pyzmq's own singleton thread, of exactly its class, is recognized."""
    garbage = sys.modules.get("zmq.utils.garbage")
    thread = getattr(getattr(garbage, "gc", None), "thread", None)
    if thread is not None and type(thread) is getattr(garbage, "GarbageCollectorThread", None):
        return thread
    return None


def _kernel_subshells() -> dict[threading.Thread, bool]:
    """The Jupyter kernel's subshell threads, each with whether it is handling a message now.

    ipykernel 7 runs a subshell in a thread of its own for each one a front end asks for; JupyterLab 4.6 asks for one
    per widget comm target by default (its setting ``commsOverSubshells``) when the notebook's first widget opens,
    and sends the widgets' messages there. Only threads of exactly ipykernel's ``SubshellThread`` class that the
    running kernel's own subshell manager holds are recognized; one that is handling a message (a widget's callback
    running) is busy."""
    subshell = sys.modules.get("ipykernel.subshell")
    kernel = getattr(_ipython(), "kernel", None)
    manager = getattr(getattr(kernel, "shell_channel_thread", None), "_manager", None)  # made with the first subshell
    if subshell is None or manager is None:
        return {}
    found = {}
    for thread in threading.enumerate():
        if type(thread) is not subshell.SubshellThread:
            continue
        try:
            subshell_id = manager.subshell_id_from_thread_id(thread.ident)
            found[thread] = subshell_id is not None and manager.get_subshell_asyncio_lock(subshell_id).locked()
        except (RuntimeError, KeyError):  # a thread of that class that the kernel's manager does not hold
            continue
    return found


def competitors() -> list[str]:
    """Threads and child processes started since :func:`arm` (except the library's and the kernel's own), by name.

    A kernel subshell counts only while it handles a message: a widget's callback is work beside the check."""
    if _snapshot is None:
        return []
    # Threads that TensorFlow's own C++ pools lend to Python callbacks show up as "dummy" threads.
    subshells = _kernel_subshells()
    kernel = {_kernel_messaging_thread(), *subshells}
    found = [f"{WIDGET_CALLBACK} (thread {t.name!r})" for t, busy in subshells.items() if busy]
    found += [
        f"thread {t.name!r}"
        for t in threading.enumerate()
        if t.ident not in _snapshot.threads
        and t.is_alive()
        and not t.name.startswith(LIBRARY_THREAD_PREFIX)
        and not isinstance(t, threading._DummyThread)
        and t not in kernel
    ]
    from tfperf.runtime import preloaded, servers  # the tf.data service's processes, the launcher that forks them

    library = servers.library_pids() | {preloaded.launcher_pid()} - {None}
    found += [f"child process {pid}" for pid in _children() if pid not in _snapshot.children and pid not in library]
    return found


def _children() -> list[int]:
    pids = []
    try:
        for task in os.listdir(f"/proc/{os.getpid()}/task"):
            with open(f"/proc/{os.getpid()}/task/{task}/children", encoding="ascii") as f:
                pids += [int(p) for p in f.read().split()]
    except OSError:
        return []
    return pids


def assert_nothing_competes(what: str = "This check") -> None:
    """Fail if code started by the notebook is running beside the code about to be timed."""
    found = competitors()
    if found and all(f.startswith(WIDGET_CALLBACK) for f in found):
        raise GradingFailure(
            f"{what} cannot time your code while a widget's callback runs in the kernel beside it (an experiment "
            f"panel's run, say): wait until it has finished, then run the Check again."
        )
    if found:
        raise GradingFailure(
            f"{what} cannot time your code while other work runs in the kernel ({', '.join(found)}). "
            f"Answers must not start threads or processes: remove the code that starts them, restart the kernel "
            f"and run the notebook again from the top."
        )


def _reset_for_tests() -> None:
    global _snapshot
    _snapshot = None
    _unseal_course_modules()


__all__ = ["arm", "assert_nothing_competes", "checked", "competitors", "given", "is_armed", "is_given", "verify"]
