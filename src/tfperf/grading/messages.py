"""Messages between the grading process and its workers: a JSON header and NumPy ``.npy`` arrays.

Never pickles: a worker runs learner code, so whatever it sends is read as data only
(``allow_pickle=False``), and a hostile worker cannot run code in the grading process.
"""

from __future__ import annotations

import io
import json
import struct
from typing import BinaryIO

#: The largest header and array a message may announce: a worker that announces more (to make this process
#: allocate it) is treated as stopped.
MAX_HEADER_BYTES = 64 * 2**20
MAX_ARRAY_BYTES = 2**30


class WorkerStopped(EOFError):
    """The other side closed the stream, or sent something that is not a whole message."""


class NotAMessage(WorkerStopped):
    """The other side sent something that is not a message, or one over the limits (``MAX_HEADER_BYTES``,
    ``MAX_ARRAY_BYTES``)."""


class CallFailed(Exception):
    """A call that the grading process asked a worker for raised an error (the worker sent it as data)."""


class NotRunnable(RuntimeError):
    """The submission cannot be re-timed out of its kernel, or the unfixed code's worker could not do what it was
    asked (and why)."""


#: The ``ename`` of an outcome that the grading process could not decide (not a failure of the answer).
OUTSIDE = "GradedOutsideKernel"


def send(stream: BinaryIO, header: dict, arrays: list | None = None) -> None:
    """Write one message: its header (JSON) and its arrays, each as an ``.npy`` file."""
    import numpy as np

    payload = json.dumps(header).encode()
    blobs = []
    for array in arrays or []:
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(array), allow_pickle=False)
        blobs.append(buffer.getvalue())
    stream.write(struct.pack(">II", len(payload), len(blobs)) + payload)
    for blob in blobs:
        stream.write(struct.pack(">Q", len(blob)) + blob)
    stream.flush()


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise WorkerStopped("the worker stopped answering")
    return data


def receive(stream: BinaryIO) -> tuple[dict, list]:
    """Read one message written by :func:`send`: ``(header, arrays)``."""
    import numpy as np

    try:
        size, count = struct.unpack(">II", _read_exactly(stream, 8))
        if size > MAX_HEADER_BYTES:
            raise NotAMessage(f"the worker announced a header of {size} bytes")
        header = json.loads(_read_exactly(stream, size))
        arrays = []
        for _ in range(count):
            (length,) = struct.unpack(">Q", _read_exactly(stream, 8))
            if length > MAX_ARRAY_BYTES:
                raise NotAMessage(f"the worker announced an array of {length} bytes")
            arrays.append(np.load(io.BytesIO(_read_exactly(stream, length)), allow_pickle=False))
    except (struct.error, ValueError) as err:  # ValueError: bad JSON, a pickled or broken array
        raise NotAMessage(f"the worker sent something that is not a message ({err})") from err
    if not isinstance(header, dict):
        raise NotAMessage("the worker sent a message whose header is not an object")
    return header, arrays
