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


def test_every_pin_installs_on_the_oldest_python_the_readme_names():
    """The README says Python 3.11 or newer. soupsieve 3.0.2 and later require 3.11.5 (3.0.0 and 3.0.1 were yanked for
    older 3.11s: their selectors need the possessive quantifiers of ``re`` that 3.11.5 mended), so the lock pins 2.8.3,
    and the set-up works on Debian 12's own Python 3.11.2, which `.ci/run` chooses (docs/contributing.md says why).
    Read from the installed distributions' ``Requires-Python``."""
    from importlib import metadata

    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name

    pinned = {
        canonicalize_name(name)
        for file in ("lock.txt", "tensorflow-cpu.txt", "dev.txt")
        for name in pins(REPO / "requirements" / file)
    }
    refused = {
        f"{dist.metadata['Name']} {dist.version}: Requires-Python {dist.metadata['Requires-Python']}"
        for dist in metadata.distributions()
        if canonicalize_name(dist.metadata["Name"]) in pinned
        and dist.metadata["Requires-Python"]
        and not SpecifierSet(dist.metadata["Requires-Python"]).contains("3.11.0")
    }
    assert refused == set()
    assert pins(REPO / "requirements" / "lock.txt")["soupsieve"] == "2.8.3"
