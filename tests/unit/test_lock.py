"""What the lock leaves out on purpose: each pin here is there for a measured reason."""

import subprocess
import sys

from tests.conftest import REPO
from tests.unit.test_binder import pins


def test_jsonschema_stays_below_the_version_that_parses_a_grammar_at_import():
    """jsonschema 4.24 and later import rfc3987-syntax (its ``format-nongpl`` extra, which jupyter-events asks for),
    which builds an Earley parser of RFC 3987 when imported: 1.07 s of a core (``python -X importtime``, 2026-11-27),
    in every process that imports nbformat or the course's modules (every nbgrader command, kernel, fork server and
    unfixed code's worker). jsonschema 4.23.0 checks the same schemas without it."""
    lock = pins(REPO / "requirements" / "lock.txt")
    assert lock["jsonschema"] == "4.23.0"
    assert "rfc3987-syntax" not in lock and "lark" not in lock
    found = subprocess.run(
        [sys.executable, "-c", "import sys, nbformat; print('rfc3987_syntax' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "False"
