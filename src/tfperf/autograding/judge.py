"""The judge: the process that runs an exercise's test cells where no learner code ever ran.

An exercise is graded by two processes. The *subject* (:mod:`tfperf.autograding.worker`, sandboxed) runs the given
cells and the learner's answer, restricted. The *judge* (``python -m tfperf.autograding.judge``, started by the
grading process) runs the instructor's cells before the answer (no answer at all, neither the learner's nor the
reference), then the instructor's test cells, with every name the answer defines bound to a :class:`Remote`: a call of it goes, through the grading process, to the subject,
which calls the answer's function on the arguments the judge chose and sends back what it returned as data
(:func:`pack`: JSON and ``.npy`` arrays, never pickles). Everything the check then decides (the expected values, the
comparison, the verdict) is computed in the judge; the subject only answers.

What the judge learns besides a call's result comes from outside the subject: the lines a call printed are read by
the grading process from the subject's own output stream (:mod:`tfperf.autograding.printed`), between markers carrying
a token drawn for that call; a function's bytes are counted in the judge from the XLA module the subject sends
(:mod:`tfperf.autograding.moved`); a ``tf.function``'s trace count is read in the subject from an object of
TensorFlow's own class (the third kind of evidence of docs/instructors.md: installed before any learner code, out of
the restricted answer's reach).

A test cell runs in the judge where every check it makes has a judge-side form (:data:`JUDGED_CHECKS`), the
answer's names appear only where a judged check or a call takes them (:func:`judged`), and no given cell runs after
the answer (:meth:`tfperf.autograding.outside.Exercise.in_judge`); the other test cells still run in the subject,
after the answer.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from tfperf.autograding.messages import WorkerStopped, receive, send

#: The checks of ``tfperf.grading`` whose judge-side form takes a :class:`Remote` where the learner's function goes.
JUDGED_CHECKS = frozenset(
    {
        "check_function",
        "check_same_as",
        "check_same_result",
        "assert_speedup",
        "assert_moves_fewer_bytes",
        "assert_prints_at_most",
        "tracing_count",
        "assert_traces_at_most",
        "assert_host_syncs_at_most",
        "assert_uploads_at_most",
        "assert_prints_each_call",
        "check_reports",
        "GradingFailure",
    }
)
#: What the judge may ask the subject besides a call: a function's bytes and trace count, and counting over calls.
PROBES = ("bytes", "traces", "count_start", "count_stop")
#: Names a judged cell may not use: the course's timer would time the pipes between the processes.
UNJUDGED_NAMES = frozenset({"timing"})
#: Characters of a test cell's printed output kept for the feedback (as the subject keeps them).
PRINTED_LIMIT = 4000


# ---------------------------------------------------------------- which test cells the judge runs


def answer_names(answer_source: str) -> tuple[str, ...]:
    """The names the instructor's answer cell defines at its top level (functions, classes, assigned names), in
    order; its imports are not among them (the judge has its own modules)."""
    try:
        tree = ast.parse(answer_source)
    except SyntaxError:
        return ()
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return tuple(dict.fromkeys(names))


def judged(test_source: str, names: tuple[str, ...], *, timed_outside: bool = True) -> bool:
    """Whether the test cell ``test_source`` runs in the judge: it uses only :data:`JUDGED_CHECKS` of ``grading``,
    and each of the answer's ``names`` only as a function it calls or as the first argument of a judged check. A speed
    check is never timed in the judge (each call of the answer crosses two pipes): a cell with one is judged only
    where the grading process times it (``timed_outside``)."""
    if not names:
        return False
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return False
    allowed: set[int] = set()  # the Name nodes that may be answer names
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "grading":
            if node.attr not in JUDGED_CHECKS or (node.attr == "assert_speedup" and not timed_outside):
                return False
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                allowed.add(id(node.func))
            if isinstance(node.func, ast.Attribute) and node.func.attr in JUDGED_CHECKS and node.args:
                allowed.add(id(node.args[0]))
            allowed |= {id(k.value) for k in node.keywords if k.arg in ("fn", "candidate")}
    used = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    return all(id(n) in allowed for n in used if n.id in names) and not any(n.id in UNJUDGED_NAMES for n in used)


# ---------------------------------------------------------------- values as data


class NotData(TypeError):
    """A value that does not cross between the processes: only tensors, arrays, numbers, strings, None, and lists,
    tuples and dicts of them do."""


def _tensorflow():
    return sys.modules.get("tensorflow")


def _is_tensor(value: Any) -> bool:
    """A tensor or variable of TensorFlow's or Keras's own classes (an answer's subclass is not: its ``numpy()``
    could say anything)."""
    owner = (getattr(type(value), "__module__", None) or "").partition(".")[0]
    if owner not in ("tensorflow", "keras"):
        return False
    tf = _tensorflow()
    return tf is not None and (tf.is_tensor(value) or isinstance(value, tf.Variable)) and hasattr(value, "numpy")


def pack(value: Any, arrays: list | None = None, callbacks: list | None = None) -> tuple[Any, list]:
    """``value`` as (a JSON description, its arrays); :class:`NotData` for a value that is not data. Only NumPy's and
    TensorFlow's own conversions run. With ``callbacks`` (the judge's side), a function is described by its index in
    that list, where it is appended: the subject gets a function that calls it back (:func:`unpack`)."""
    import numpy as np

    arrays = [] if arrays is None else arrays
    kind = type(value)
    if callbacks is not None and kind in (types.FunctionType, types.MethodType, types.BuiltinFunctionType):
        callbacks.append(value)
        return {"callback": len(callbacks) - 1}, arrays
    if value is None or kind in (bool, int, float, str):
        return {"py": value}, arrays
    if kind is complex:
        value = np.complex128(value)
        kind = type(value)
    if kind in (list, tuple):
        return {kind.__name__: [pack(item, arrays, callbacks)[0] for item in value]}, arrays
    if kind is dict:
        if not all(type(k) is str for k in value):
            raise NotData("a dict whose keys are not all strings")
        return {"dict": [[k, pack(v, arrays, callbacks)[0]] for k, v in value.items()]}, arrays
    if kind is np.ndarray or isinstance(value, np.generic) and kind in np.sctypeDict.values():
        if value.dtype.hasobject:
            raise NotData("an array of Python objects")
        arrays.append(np.asarray(value))
        return {"array" if kind is np.ndarray else "scalar": len(arrays) - 1}, arrays
    if _is_tensor(value):
        arrays.append(np.asarray(value.numpy()))
        return {"tensor": len(arrays) - 1}, arrays
    raise NotData(f"a {kind.__name__}: expected a tensor, an array or a number (TensorFlow's, NumPy's or Python's own)")


def unpack(description: Any, arrays: list, call_back: Callable[[int], Callable] | None = None) -> Any:
    """The value :func:`pack` described (a tensor made again as an eager tensor; a callback, where ``call_back`` is
    given, as ``call_back(index)``); :class:`NotData` where the description is not one :func:`pack` writes."""
    import numpy as np

    if not isinstance(description, dict) or len(description) != 1:
        raise NotData("not a value's description")
    ((kind, content),) = description.items()
    if kind == "callback" and call_back is not None and type(content) is int:
        return call_back(content)
    if kind == "py":
        if content is not None and type(content) not in (bool, int, float, str):
            raise NotData("not a value's description")
        return content
    if kind in ("list", "tuple"):
        items = [unpack(item, arrays, call_back) for item in content]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {str(k): unpack(v, arrays, call_back) for k, v in content}
    if kind in ("array", "scalar", "tensor") and type(content) is int and 0 <= content < len(arrays):
        array = np.asarray(arrays[content])
        if kind == "array":
            return array
        if kind == "scalar":
            return array[()]
        tf = _tensorflow()
        if tf is None:
            import tensorflow as tf
        return tf.constant(array)
    raise NotData("not a value's description")


# ---------------------------------------------------------------- in the subject


class CallbackFailed(RuntimeError):
    """A function the check passed to the answer raised in the judge (the answer's call of it fails)."""


def callback_stub(index: int, ask: Callable[[dict, list], tuple[dict, list]]) -> Callable:
    """In the subject, the function the check passed as argument ``index``: calling it sends its arguments (as data)
    to the judge, which runs the check's function (:meth:`Channel.ask`), and returns its result (as data). ``ask``
    sends one message and returns the reply."""

    def called_back(*args: Any) -> Any:
        from tfperf.measure import host_syncs

        with host_syncs.uncounted():  # what the answer passes is its own to read: the crossing is not
            description, arrays = pack(tuple(args))
        header, arrays = ask({"callback": index, "args": description}, arrays)
        if "called_back" not in header:
            raise CallbackFailed(str(header.get("callback_error", "the check's function failed")))
        with host_syncs.uncounted():
            return unpack(header["called_back"], arrays)

    return called_back


def answer_call(request: dict, arrays: list, namespace: dict, ask=None) -> tuple[dict, list]:
    """The subject's reply to ``{"do": "call", "function": name, "args": ..., "probe": ...}``: the answer's function
    ``name`` (a name its cells bound: looked up, never evaluated) called on the arguments sent, its result as data;
    with ``probe`` ``"bytes"`` the bytes it moves (:func:`tfperf.autograding.moved.read`), ``"traces"`` its trace
    count (:func:`tfperf.autograding.traced.count`). A call with a ``witness`` token runs between that token's
    markers, nothing captured: the grading process reads what it prints. ``ask`` (one message out, its reply back)
    carries the calls of the check's functions passed as arguments (:func:`callback_stub`)."""
    from tfperf.autograding.printed import witnessed_call
    from tfperf.measure import host_syncs
    from tfperf.runtime import logs

    probe = request.get("probe")
    if probe == "count_start":
        return counting_started(tuple(request.get("kinds") or ())), []
    if probe == "count_stop":
        return counting_stopped(tuple(str(n) for n in request.get("names") or ()), namespace), []
    name = str(request.get("function"))
    if name not in namespace:
        raise NameError(f"name {name!r} is not defined")
    function = namespace[name]
    stub = None if ask is None else (lambda index: callback_stub(index, ask))
    with host_syncs.uncounted():  # the judge's values made tensors here: not the answer's uploads
        args = tuple(unpack(request.get("args"), arrays, stub)) if request.get("args") is not None else ()
    if probe in ("bytes", "traces"):
        from tfperf.autograding import moved, traced

        reader = moved.read if probe == "bytes" else traced.count
        return reader({"function": "f", "args": "a"}, {"f": function, "a": args}), []
    if request.get("witness"):
        result = witnessed_call(str(request["witness"]), lambda: function(*args))
    else:
        with logs.captured_output():
            result = function(*args)
    try:
        with host_syncs.uncounted():  # read to be sent: not the answer's reads
            description, packed = pack(result)
    except NotData as err:
        return {"not_data": str(err)}, []
    return {"result": description}, packed


#: The subject's counters while the judge counts (:func:`counting_started` to :func:`counting_stopped`).
_COUNTING: dict = {}
#: What the judge may count: host reads and uploads (:mod:`tfperf.measure.host_syncs`); traces
#: (:mod:`tfperf.measure.traces`) with the runs of each graph (:mod:`tfperf.measure.op_counts`).
COUNTED = ("host_syncs", "traces")


def counting_started(kinds: tuple) -> dict:
    """Start counting ``kinds`` (of :data:`COUNTED`) in this thread, over every call until :func:`counting_stopped`:
    the library's counters, installed by the worker, out of the restricted answer's reach."""
    from tfperf.measure import host_syncs, op_counts, traces

    if "stack" in _COUNTING:
        _COUNTING.pop("stack").close()
    stack = contextlib.ExitStack()
    counters: dict = {}
    if "host_syncs" in kinds:
        counters["host_syncs"] = stack.enter_context(host_syncs.counting())
    if "traces" in kinds:
        counters["traces"] = stack.enter_context(traces.counting())
        counters["ops"] = stack.enter_context(op_counts.counting())
    _COUNTING.update(stack=stack, counters=counters)
    return {"counting": sorted(counters)}


def counting_stopped(names: tuple[str, ...], namespace: dict) -> dict:
    """Stop counting: what was counted since :func:`counting_started`, as data (each of ``names``'s traces, the runs
    of its graphs and TensorFlow's own trace count, where it is a ``tf.function`` of TensorFlow's own class), and the
    counters that were undone meanwhile (``tampered``)."""
    from tfperf.measure import host_syncs, op_counts, traces

    counters = _COUNTING.pop("counters", {})
    tampered: list[str] = []
    if "host_syncs" in counters:
        tampered += host_syncs.tampered()
    if "traces" in counters:
        tampered += traces.tampered()
        tampered += [] if op_counts.still_counting(counters["ops"]) else ["TensorFlow's op callbacks"]
    if "stack" in _COUNTING:
        _COUNTING.pop("stack").close()
    seen: dict = {"tampered": tampered}
    if "host_syncs" in counters:
        syncs = counters["host_syncs"]
        seen["host_syncs"] = {
            "reads": syncs.count,
            "reads_described": syncs.describe(),
            "uploads": syncs.uploads,
            "uploads_described": syncs.describe_uploads(),
        }
    if "traces" in counters:
        from tensorflow.python.eager.polymorphic_function import polymorphic_function

        from tfperf.grading.tracing import _graph_names

        functions = {}
        for name in names:
            function = namespace.get(name)
            if type(function) is not polymorphic_function.Function:
                functions[name] = {"kind": type(function).__name__}
                continue
            functions[name] = {
                "traced": counters["traces"].of(function),
                "runs": counters["ops"].runs_of(_graph_names(function)),
                "in_all": int(polymorphic_function.Function.experimental_get_tracing_count(function)),
            }
        seen["functions"] = functions
    return seen


# ---------------------------------------------------------------- in the judge


class ReturnedNotData(TypeError):
    """The answer's function returned what does not cross as data (:func:`pack`): the check says what it returned."""


class SubjectFailed(Exception):
    """The subject's process stopped, or its reply was not data: the test cell is not graded."""


class Remote:
    """The learner's ``name`` in the judge: calling it calls the answer's function in the subject with these
    arguments (sent as data) and returns what it returned (as data). ``printed``: what the last call printed, as the
    grading process read it from the subject's output stream (``count`` lines, the first ``lines``)."""

    def __init__(self, name: str, channel: Channel):
        self.__name__ = self.__qualname__ = name
        self._channel = channel
        self.printed: dict = {"count": 0, "lines": []}

    def __repr__(self) -> str:
        return f"<the answer's {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{self.__name__} is called in the answer's process with positional arguments only")
        header, arrays = self._channel.ask(self.__name__, args)
        self.printed = header.get("printed") if isinstance(header.get("printed"), dict) else {"count": 0, "lines": []}
        return unpack(header.get("result"), arrays)

    def probe(self, what: str, args: tuple = (), **detail: Any) -> dict:
        """The subject's reading of ``what`` (``bytes`` on ``args``, ``traces``) of the answer's function."""
        header, _ = self._channel.ask(self.__name__, args, probe=what, **detail)
        return header

    @contextlib.contextmanager
    def counted(self, kinds: tuple[str, ...], names: tuple[str, ...] = ()):
        """Count ``kinds`` (of :data:`COUNTED`) in the subject over the block's calls: the dict yielded is filled,
        when the block ends, with what :func:`counting_stopped` read (``names``: the answer's functions whose traces
        are read)."""
        self.probe("count_start", kinds=list(kinds))
        seen: dict = {}
        try:
            yield seen
        finally:
            seen.update(self.probe("count_stop", names=list(names)))


class SeenSyncs:
    """The host reads and uploads the subject counted (:func:`counting_stopped`), as the checks read a
    :class:`tfperf.measure.host_syncs.HostSyncs`."""

    def __init__(self, seen: dict):
        self.count, self.uploads = int(seen.get("reads", 0)), int(seen.get("uploads", 0))
        self._reads, self._uploads = str(seen.get("reads_described", "")), str(seen.get("uploads_described", ""))

    def describe(self) -> str:
        return self._reads

    def describe_uploads(self) -> str:
        return self._uploads


class AnswerRaised(Exception):
    """The answer's function raised in the subject: a subclass named as its exception (:func:`raised`) carries its
    message, as the subject reported it (shown to the learner as the checks show any exception of their code)."""


_RAISED: dict[str, type] = {}


def raised(ename: str, evalue: str) -> AnswerRaised:
    """The exception the judge raises for the answer's ``ename: evalue``: a subclass of :class:`AnswerRaised` of that
    name (a ``NotImplementedError`` also of that kind: the checks say "not written yet" for it)."""
    name = ename if ename.isidentifier() else "Error"
    if name not in _RAISED:
        bases = (
            (AnswerRaised, NotImplementedError) if name in ("NotImplementedError", "NotWritten") else (AnswerRaised,)
        )
        _RAISED[name] = type(name, bases, {})
    return _RAISED[name](evalue)


class Channel:
    """The judge's line to the grading process: each call of a :class:`Remote` is a request and waits for its reply."""

    def __init__(self, requests, replies):
        self.requests, self.replies = requests, replies

    def ask(self, name: str, args: tuple, probe: str | None = None, **detail: Any) -> tuple[dict, list]:
        callbacks: list = []
        try:
            description, arrays = pack(tuple(args), callbacks=callbacks)
        except NotData as err:
            raise TypeError(f"the judge cannot send {name}'s arguments to the answer's process ({err})") from None
        send(self.replies, {"call": name, "args": description, "probe": probe, **detail}, arrays)
        header, arrays = receive(self.requests)
        while "callback" in header:  # the answer called a function the check passed: it runs here, on data
            try:
                function = callbacks[int(header["callback"])]
                description, out = pack(function(*unpack(header.get("args"), arrays)))
                send(self.replies, {"called_back": description}, out)
            except Exception as err:  # noqa: BLE001 (the answer's call of it fails)
                send(self.replies, {"callback_error": f"{type(err).__name__}: {err}"})
            header, arrays = receive(self.requests)
        if "stopped" in header:
            raise SubjectFailed(str(header["stopped"]))
        error = header.get("error")
        if isinstance(error, dict):
            raise raised(str(error.get("ename", "Error")), str(error.get("evalue", "")))
        if probe is None and "not_data" in header:
            raise ReturnedNotData(str(header["not_data"]))
        if probe is None and "result" not in header:
            raise SubjectFailed("the answer's process sent no result")
        return header, arrays


def serve(requests, replies) -> None:
    """The judge: for each exercise it is sent (until ``exit`` or the end of its requests), :func:`judge_exercise`.
    It runs no learner code, so one judge serves one exercise after another, each in a new namespace."""
    while True:
        try:
            header, _ = receive(requests)
        except WorkerStopped:
            return
        if header.get("do") == "exit":
            return
        judge_exercise(header, requests, replies)


def judge_exercise(header: dict, requests, replies) -> None:
    """Run the instructor's cells, bind the answer's names to :class:`Remote`, run each test cell it is sent, and
    report each (what it printed, the error it raised); then ``finished``."""
    from tfperf.autograding.worker import _failure, _run_cell

    namespace: dict = {"__name__": "__main__"}
    channel = Channel(requests, replies)
    for index, source in enumerate(header["cells"]):
        error = _run_cell(source, f"<cell {index + 1}>", namespace)
        if error is not None:
            send(replies, {"failed": f"the instructor's cell {index + 1} raised {error['ename']}: {error['evalue']}"})
            return
    for name in header["answer_names"]:
        namespace[name] = Remote(name, channel)
    for grade_id, source in zip(header["tests"], header["test_sources"]):
        name = f"<test {grade_id}>"
        linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            try:
                exec(compile(source, name, "exec"), namespace)
                error = None
            except SubjectFailed as err:
                error = {"ename": "GradedOutsideKernel", "evalue": f"the answer's process stopped: {err}"}
            except BaseException as err:  # noqa: BLE001 (the test cell failed)
                error = _failure(err)
        send(replies, {"test": grade_id, "printed": printed.getvalue()[-PRINTED_LIMIT:], "error": error})
    send(replies, {"finished": True})


def _judge_main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what the instructor's cells print goes to stderr, never into the replies
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":  # the classes the checks know are the package module's, not this script's copy
    from tfperf.autograding.judge import _judge_main as main

    main()
