"""Each chapter's reference answer passes its speed Check in a real kernel as a learner's JupyterLab leaves it: a
kernel subshell made after the setup cell (JupyterLab 4.6 sends widget messages over one by default), and the
exercise's given cell run a second time. The browser tests walk the same path with the course's own settings."""

from __future__ import annotations

import os
import re

import pytest
from jupyter_client.manager import start_new_kernel

from tests.learner_path import EXERCISES, grade_id, notebook_of, reference_answer
from tfperf.autograding.cells import replay_source

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(client, code: str, subshell: str | None = None) -> tuple[str, list[str]]:
    """Run ``code`` (in ``subshell`` if given); its status and the texts of its error outputs."""
    errors = []

    def keep(msg):
        if msg["msg_type"] == "error":
            errors.append(ANSI.sub("", "\n".join(msg["content"]["traceback"])))

    if subshell is None:
        reply = client.execute_interactive(code, timeout=600, output_hook=keep)
        return reply["content"]["status"], errors
    content = {"code": code, "silent": False, "store_history": False, "user_expressions": {}, "allow_stdin": False}
    msg = client.session.msg("execute_request", content)
    msg["header"]["subshell_id"] = subshell
    client.shell_channel.send(msg)
    while True:
        reply = client.shell_channel.get_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return reply["content"]["status"], errors


def create_subshell(client) -> str:
    """What JupyterLab 4.6 asks of the kernel when a notebook's first widget opens its comm."""
    client.control_channel.send(client.session.msg("create_subshell_request", {}))
    reply = client.control_channel.get_msg(timeout=30)
    assert reply["content"]["status"] == "ok", reply["content"]
    return reply["content"]["subshell_id"]


@pytest.mark.parametrize("chapter", sorted(EXERCISES))
def test_the_reference_passes_its_speed_check_beside_a_kernel_subshell(chapter):
    given, answer, check = EXERCISES[chapter]
    nb = notebook_of(chapter)  # the student version, as the learner has it
    cells = [c for c in nb.cells if c.cell_type == "code"]
    ids = [grade_id(c) for c in cells]
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    manager, client = start_new_kernel(kernel_name="python3", env={**env, "TFPERF_SIZE": "ci"})
    try:
        status, errors = run(client, cells[ids.index("setup")].source)
        assert status == "ok", errors
        subshell = create_subshell(client)
        assert run(client, "1 + 1", subshell) == ("ok", [])  # a widget's message handled in the subshell's thread
        # what the exercise's checks need, as a fresh process runs it: the given cells, the answers (the reference
        # ones: the learner wrote them), the demonstrations' imports
        for cell, cell_id in zip(cells[ids.index("setup") + 1 : ids.index(check)], ids[ids.index("setup") + 1 :]):
            written = cell.metadata.get("nbgrader", {}).get("solution")
            source = reference_answer(chapter, cell_id) if written else replay_source(cell)
            if source:
                status, errors = run(client, source)
                assert status == "ok", (cell_id, errors)
        for again in (given, answer):  # run a second time, as a learner does: harmless
            source = reference_answer(chapter, answer) if again == answer else cells[ids.index(again)].source
            assert run(client, source) == ("ok", []), again
        status, errors = run(client, cells[ids.index(check)].source)
        assert (status, errors) == ("ok", []), errors
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
