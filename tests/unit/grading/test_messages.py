import io

import numpy as np
import pytest

from tfperf.grading import messages


def test_messages_carry_json_and_arrays_but_never_pickles():
    stream = io.BytesIO()
    messages.send(stream, {"ok": True}, [np.arange(3.0), np.float32(2)])
    stream.seek(0)
    header, arrays = messages.receive(stream)
    assert header == {"ok": True} and np.array_equal(arrays[0], np.arange(3.0)) and arrays[1] == 2
    blob = io.BytesIO()
    np.save(blob, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    payload = b'{"ok": true}'
    hostile = io.BytesIO(
        len(payload).to_bytes(4, "big")
        + (1).to_bytes(4, "big")
        + payload
        + len(blob.getvalue()).to_bytes(8, "big")
        + blob.getvalue()
    )
    with pytest.raises(messages.WorkerStopped, match="allow_pickle"):
        messages.receive(hostile)


def test_a_cut_message_is_a_stopped_worker():
    stream = io.BytesIO()
    messages.send(stream, {"ok": True})
    with pytest.raises(messages.WorkerStopped):
        messages.receive(io.BytesIO(stream.getvalue()[:-3]))
    with pytest.raises(messages.WorkerStopped, match="not an object"):
        stream = io.BytesIO()
        messages.send(stream, [1, 2])  # type: ignore[arg-type]
        messages.receive(io.BytesIO(stream.getvalue()))


def test_a_worker_cannot_make_this_process_allocate_what_it_announces():
    huge = io.BytesIO((2**31).to_bytes(4, "big") + (0).to_bytes(4, "big"))
    with pytest.raises(messages.WorkerStopped, match="header of"):
        messages.receive(huge)
    header = b"{}"
    huge = io.BytesIO(len(header).to_bytes(4, "big") + (1).to_bytes(4, "big") + header + (2**40).to_bytes(8, "big"))
    with pytest.raises(messages.WorkerStopped, match="array of"):
        messages.receive(huge)
