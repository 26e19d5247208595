"""The learner's function as the judge holds it, and the values that cross between the judge and the subject.

In the judge (:mod:`tfperf.autograding.judge`), each name the answer defines is a :class:`Remote`: calling it sends
the arguments (as data, :func:`pack`) to the process that runs the answer, which calls the learner's function and
sends back what it returned (as data, :func:`unpack`). The checks of this package take a :class:`Remote` where they
take the learner's function, and read what they need besides its result from what it reports: what a call printed
(:attr:`Remote.printed`), its bytes and trace counts (:meth:`Remote.probe`), host reads and traces counted over calls
(:meth:`Remote.counted`). Values are JSON and NumPy ``.npy`` arrays, never pickles.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any

#: What the judge may count in the subject over calls (:meth:`Remote.counted`): host reads and uploads
#: (:mod:`tfperf.measure.host_syncs`); traces (:mod:`tfperf.measure.traces`) with the runs of each graph; chapter 5's
#: training steps run (:func:`tfperf.experiments.gpu_sync.steps_run`), in all and when each function the check passed
#: was called back.
COUNTED = ("host_syncs", "traces", "steps")
#: The kinds of value that cross as a function called back (:func:`pack`), and whose calls a speed check records
#: (:func:`tfperf.grading.speed.recording`).
CALLED_BACK = (types.FunctionType, types.MethodType, types.BuiltinFunctionType)


class NotData(TypeError):
    """A value that does not cross between the processes: only tensors, arrays, numbers, strings, None, and lists,
    tuples and dicts of them do."""


def _tensorflow():
    return sys.modules.get("tensorflow")


def is_tensor(value: Any) -> bool:
    """A tensor or variable of TensorFlow's or Keras's own classes (an answer's subclass is not: its ``numpy()``
    could say anything)."""
    owner = (getattr(type(value), "__module__", None) or "").partition(".")[0]
    if owner not in ("tensorflow", "keras"):
        return False
    tf = _tensorflow()
    return tf is not None and (tf.is_tensor(value) or isinstance(value, tf.Variable)) and hasattr(value, "numpy")


def positional(function: Callable[..., Any], values: tuple, keywords: dict) -> tuple:
    """A call's arguments in ``function``'s order, whether passed by position or by name (as they are where its
    signature cannot be read, or the names do not fit it: the call itself then says what is wrong)."""
    if not keywords:
        return tuple(values)
    try:
        return tuple(inspect.signature(function).bind(*values, **keywords).args)
    except (TypeError, ValueError):
        return (*values, *keywords.values())


def pack(value: Any, arrays: list | None = None, callbacks: list | None = None) -> tuple[Any, list]:
    """``value`` as (a JSON description, its arrays); :class:`NotData` for a value that is not data. Only NumPy's and
    TensorFlow's own conversions run. With ``callbacks`` (the judge's side), a function is described by its index in
    that list, where it is appended: the subject gets a function that calls it back (:func:`unpack`)."""
    import numpy as np

    arrays = [] if arrays is None else arrays
    kind = type(value)
    if callbacks is not None and kind in CALLED_BACK:
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
    if is_tensor(value):
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


# ---------------------------------------------------------------- the handle


class ReturnedNotData(TypeError):
    """The answer's function returned what does not cross as data (:func:`pack`): the check says what it returned."""


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


class Remote:
    """The learner's ``name`` in the judge: calling it calls the answer's function in the subject with these
    arguments (sent as data) and returns what it returned (as data). ``printed``: what the last call printed, as the
    grading process read it from the subject's output stream (``count`` lines, the first ``lines``)."""

    def __init__(self, name: str, channel: Any):
        """``channel``: what carries the calls, ``channel.ask(name, args, probe=None, **detail) -> (header, arrays)``
        (:class:`tfperf.autograding.judge.Channel`)."""
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
    def counted(self, kinds: tuple[str, ...], names: tuple[str, ...] = (), marks: int | None = None):
        """Count ``kinds`` (of :data:`COUNTED`) in the subject over the block's calls: the dict yielded is filled,
        when the block ends, with what :func:`tfperf.autograding.worker.counting_stopped` read (``names``: the answer's functions whose traces
        are read). ``marks``: chapter 5's training steps are marked there over the block
        (:func:`tfperf.experiments.gpu_sync.marked`)."""
        self.probe("count_start", kinds=list(kinds), marks=marks)
        seen: dict = {}
        try:
            yield seen
        finally:
            seen.update(self.probe("count_stop", names=list(names)))


class SeenSyncs:
    """The host reads and uploads the subject counted (:func:`tfperf.autograding.worker.counting_stopped`), as the checks read a
    :class:`tfperf.measure.host_syncs.HostSyncs`."""

    def __init__(self, seen: dict):
        self.count, self.uploads = int(seen.get("reads", 0)), int(seen.get("uploads", 0))
        self._reads, self._uploads = str(seen.get("reads_described", "")), str(seen.get("uploads_described", ""))

    def describe(self) -> str:
        return self._reads

    def describe_uploads(self) -> str:
        return self._uploads
