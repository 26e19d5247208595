"""What a learner sees in JupyterLab when a check fails: run in a real IPython kernel (jupyter_client),
as JupyterLab and nbgrader run the notebooks."""

import os
import re

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from tests.conftest import REPO

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def kernel():
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def execute(client, code: str) -> tuple[dict, list[dict]]:
    """Run ``code`` as a cell; return the reply's content and the cell's outputs (iopub messages)."""
    outputs = []

    def keep(msg):
        if msg["msg_type"] in ("error", "stream", "execute_result", "display_data"):
            outputs.append({"type": msg["msg_type"], **msg["content"]})

    reply = client.execute_interactive(code, timeout=180, output_hook=keep)
    return reply["content"], outputs


def the_error(reply: dict, outputs: list[dict]) -> str:
    """The cell failed (so nbgrader scores it 0) with one error output: its text as the learner sees it."""
    assert reply["status"] == "error"
    errors = [o for o in outputs if o["type"] == "error"]
    assert len(errors) == 1, outputs
    return ANSI.sub("", "\n".join(errors[0]["traceback"]))


def test_a_failed_check_shows_its_message_alone(kernel):
    reply, outputs = execute(
        kernel,
        (
            "import numpy as np\n"
            "from tfperf import grading\n"
            "grading.check_same_result(np.zeros(3), np.ones(3), what='scores(x)', section='3. Casting')\n"
        ),
    )
    shown = the_error(reply, outputs)
    assert shown.startswith("Check failed: scores(x) differs from the expected values")
    assert 'Reread the section "3. Casting".' in shown
    assert "Traceback" not in shown and "tfperf" not in shown and "File " not in shown
    assert len(shown.splitlines()) <= 3
    assert reply["ename"] == "GradingFailure"
    assert not [o for o in outputs if o["type"] == "stream" and o["name"] == "stderr"]


def test_an_unwritten_function_leads_to_not_written_yet_and_the_section(kernel):
    reply, outputs = execute(
        kernel,
        (
            "import numpy as np\n"
            "from tfperf import grading\n"
            "def weighted_mean(x):\n"
            "    raise NotImplementedError()\n"
            "grading.check_function(weighted_mean, (np.ones(2),), np.ones(2), what='weighted_mean', section='2. Dtypes')\n"
        ),
    )
    shown = the_error(reply, outputs)
    assert "weighted_mean is not written yet" in shown and 'Reread the section "2. Dtypes".' in shown
    assert "Traceback" not in shown and "tfperf" not in shown


def test_an_untouched_answer_cell_runs_quietly_and_its_check_says_not_written_yet(kernel):
    # The student version of an answer that defines its names at the top level (tfperf.authoring.notebooks):
    # the cell runs (Run All goes on to the Check), and a Check that uses a name says it is not written yet.
    nb = nbformat.read(REPO / "notebooks" / "02_eager_vs_graph" / "eager_vs_graph.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "predict")
    assert 'section 4, "Retracing"' in cell.source  # the answer cell names the section to reread
    reply, outputs = execute(kernel, "import tensorflow as tf\nfrom tfperf import grading\n" + cell.source)
    assert reply["status"] == "ok", outputs
    reply, outputs = execute(
        kernel,
        "grading.check_function(predict, (tf.ones([1, 64]), 3), None, what='predict(x, 3)', section='4. Retracing')",
    )
    shown = the_error(reply, outputs)
    assert shown.startswith("Check failed: predict is not written yet.")
    assert 'Reread the section "4. Retracing".' in shown and "Traceback" not in shown


def test_a_placeholder_used_outside_a_check_says_not_written_yet_in_one_line(kernel):
    reply, outputs = execute(
        kernel, "from tfperf import grading\nFixedModel = grading.not_written('FixedModel')\nFixedModel(3)"
    )
    shown = the_error(reply, outputs)
    assert reply["ename"] == "NotWritten"
    assert shown.startswith("Check failed: FixedModel is not written yet") and len(shown.splitlines()) == 1


def test_other_errors_keep_their_traceback(kernel):
    reply, outputs = execute(kernel, "def f():\n    return 1 / 0\nf()\n")
    shown = the_error(reply, outputs)
    assert "ZeroDivisionError" in shown and "Traceback" in shown


def create_subshell(client) -> str:
    """Ask the kernel for a subshell on the control channel, as JupyterLab 4.6 does when a notebook's first widget
    opens its comm (its setting ``commsOverSubshells``, by default ``perCommTarget``)."""
    client.control_channel.send(client.session.msg("create_subshell_request", {}))
    reply = client.control_channel.get_msg(timeout=30)
    assert reply["content"]["status"] == "ok", reply["content"]
    return reply["content"]["subshell_id"]


def send_to_subshell(client, subshell_id: str, code: str) -> str:
    """Start running ``code`` in the subshell (as a widget's message would be handled there); its message id."""
    content = {"code": code, "silent": False, "store_history": False, "user_expressions": {}, "allow_stdin": False}
    msg = client.session.msg("execute_request", content)
    msg["header"]["subshell_id"] = subshell_id
    client.shell_channel.send(msg)
    return msg["header"]["msg_id"]


def shell_reply(client, msg_id: str) -> dict:
    while True:
        reply = client.shell_channel.get_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


def test_the_kernels_subshells_compete_with_a_check_only_while_they_run_a_callback():
    """A subshell made after the setup cell (JupyterLab's widgets) is the kernel's own thread, not the learner's;
    while it handles a message (a widget's callback) it is work beside the check, and a thread of the same class
    that the kernel does not hold is still the learner's."""
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        reply, outputs = execute(client, "from tfperf.grading import guard\nguard.arm()")
        assert reply["status"] == "ok", outputs
        subshell = create_subshell(client)
        assert shell_reply(client, send_to_subshell(client, subshell, "1 + 1"))["status"] == "ok"
        # the subshell sends its reply a moment before it is idle again (seen under the suite's load, twice)
        idle = "for _ in range(100):\n    if not guard.competitors():\n        break\n    time.sleep(0.02)\n"
        reply, outputs = execute(client, "import time\n" + idle + "print(guard.competitors())")
        assert [o["text"] for o in outputs if o["type"] == "stream"] == ["[]\n"]

        busy = send_to_subshell(client, subshell, "import time\ntime.sleep(4)")
        reply, outputs = execute(client, "import time\ntime.sleep(1)\nguard.assert_nothing_competes('The speed check')")
        shown = the_error(reply, outputs)
        assert "while a widget's callback runs in the kernel beside it" in shown, shown
        assert shell_reply(client, busy)["status"] == "ok"

        reply, outputs = execute(
            client,
            idle + "import zmq\nfrom ipykernel.subshell import SubshellThread\n"
            "look_alike = SubshellThread('made-by-the-answer', zmq.Context.instance())\nlook_alike.start()\n"
            "print(guard.competitors())\nlook_alike.stop()\nlook_alike.join()",
        )
        assert [o["text"] for o in outputs if o["type"] == "stream"] == ["[\"thread 'subshell-made-by-the-answer'\"]\n"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def chapter_one_up_to_its_first_check() -> nbformat.NotebookNode:
    """Chapter 1's student version as a fresh process runs it up to its first exercise: the setup cell, the
    demonstrations' imports, the untouched answer and its Check; then one cell more."""
    from tfperf.autograding.cells import replay_source

    nb = nbformat.read(REPO / "notebooks" / "01_tensors" / "tensors_and_devices.ipynb", as_version=4)
    kept = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        source = cell.source if grade_id == "weighted_mean_tests" else replay_source(cell)
        if source:
            kept.append(nbformat.v4.new_code_cell(source, metadata=cell.metadata))
        if grade_id == "weighted_mean_tests":
            break
    kept.append(nbformat.v4.new_code_cell("print('the cell after the Check ran')"))
    return nbformat.v4.new_notebook(cells=kept, metadata=nb.metadata)


def test_a_check_on_an_unwritten_answer_shows_its_failure_but_lets_run_all_go_on():
    """After the setup cell, a Check that fails only because the answer is not written yet shows its failure as an
    error output, and its cell succeeds (JupyterLab's Run All stops at a cell whose execution fails); a Check that
    fails for another reason still fails its cell."""
    nb = chapter_one_up_to_its_first_check()
    manager, client = start_new_kernel(kernel_name="python3", env={**os.environ, "TFPERF_SIZE": "ci"})
    try:
        for cell in nb.cells[:-2]:
            reply, outputs = execute(client, cell.source)
            assert reply["status"] == "ok", outputs
        reply, outputs = execute(client, nb.cells[-2].source)
        assert reply["status"] == "ok"
        errors = [o for o in outputs if o["type"] == "error"]
        assert (
            len(errors) == 1 and "weighted_mean([1, 2, 3], [0.5, 0.25, 0.25]) is not written yet" in errors[0]["evalue"]
        )
        reply, outputs = execute(client, "concepts_answer = grading.not_written('q')\nconcepts_answer()")
        assert reply["status"] == "ok" and [o["ename"] for o in outputs if o["type"] == "error"] == ["NotWritten"]
        reply, outputs = execute(
            client, "grading.check_function(lambda x: x, (1,), 2, what='double', section='2. Dtypes do not mix')"
        )
        assert "Check failed: double differs" in the_error(reply, outputs)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_nbgraders_validate_still_reports_an_unwritten_exercise_as_failing(tmp_path):
    from nbgrader.validator import Validator

    path = tmp_path / "chapter.ipynb"
    nbformat.write(chapter_one_up_to_its_first_check(), path)
    results = Validator(ignore_checksums=True).validate(str(path))
    failed = results.get("failed", [])
    assert [f["source"].splitlines()[0] for f in failed] == ["# Check: run this cell to test your answer."], results
    assert "not written yet" in failed[0]["error"]


GIVEN_CELL = (
    "import numpy as np\n"
    "from tfperf import grading\n"
    "SCALE = np.float32(2)\n"
    "def slow(x):\n    return x * SCALE\n\n"
    "grading.given(slow)\n"
)
CHECK = "grading.check_function(lambda x: x * 2, (1.0,), 2.0, what='double')"


def test_a_given_cell_run_again_in_the_kernel_is_harmless_and_a_changed_one_is_not():
    """IPython compiles each statement of a cell on its own: the given cell is recognized by its whole source (a
    constant it defines is a new object when it runs again)."""
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        reply, outputs = execute(client, "from tfperf.grading import guard\nguard.arm()")
        assert reply["status"] == "ok", outputs
        for _ in range(3):
            assert execute(client, GIVEN_CELL)[0]["status"] == "ok"
            reply, outputs = execute(client, CHECK)
            assert reply["status"] == "ok", outputs
        assert execute(client, GIVEN_CELL.replace("np.float32(2)", "np.float32(0)"))[0]["status"] == "ok"
        assert "slow (registered as given code twice)" in the_error(*execute(client, CHECK))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
