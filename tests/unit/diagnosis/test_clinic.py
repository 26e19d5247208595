"""The clinic: ``tfperf diagnose`` on small scripts that each reproduce one real, reported performance problem of
TensorFlow/Keras code (indexed by Cao et al., FSE 2022: the Stack Overflow post and its root-cause label are in each
script's docstring), and on clean scripts of the same kinds. Each script says what a fair diagnosis names
(``Expected:``): the codes of its cause, ``none`` for a clean script, or ``(outside the catalogue)`` for a real cause
the tool has no finding for.

Each script runs unmodified, as ``python -m tfperf diagnose`` runs it, in this process (the tool stops it after its
measured steps). On this CPU the causes that cost nothing without a device (host reads, uploads, prints: see
tfperf.diagnosis.findings) are found but not worth fixing here: they are checked among all findings, the others
among the problems the report puts first. The precision and recall per finding code are written to
``test-artifacts/clinic.json`` (and into docs/measurements-08_capstone.md by hand).
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest

from tests.conftest import REPO
from tfperf.diagnosis.script import diagnose_script

CLINIC = Path(__file__).parent / "clinic"
OUTSIDE = "(outside the catalogue)"
#: Causes the tool finds but, on a machine without a GPU, prices at nothing: found among all findings, not problems.
DEVICE_DEPENDENT = {"host-read-every-step", "per-batch-upload", "print-in-step", "low-precision-unused"}
#: What a fair diagnosis names and the tool does not, said here rather than hidden: script -> codes it misses.
KNOWN_MISSES = {
    # fit with batch_size=1: Keras's loop around each call costs most of a step, and the tool names that
    # (one-step-per-call); a call of Keras's train function costs more than 2 small tf.function calls, so small-batch
    # is not decided.
    "batch_size_one.py": {"small-batch"},
}
RESULTS: dict[str, dict] = {}


def expected(script: Path) -> list[str]:
    found = re.search(r"^Expected: (.*)$", script.read_text(), re.M)
    assert found, f"{script.name} says nothing after 'Expected:'"
    said = found.group(1).strip()
    return [] if said in ("none", OUTSIDE) else said.split()


SCRIPTS = sorted(CLINIC.glob("*.py"))


def test_the_clinic_holds_twenty_problems_and_five_clean_scripts():
    labels = [expected(s) for s in SCRIPTS]
    problems = [s for s, codes in zip(SCRIPTS, labels) if codes or OUTSIDE in s.read_text()]
    clean = [s for s, codes in zip(SCRIPTS, labels) if not codes and OUTSIDE not in s.read_text()]
    assert len(problems) >= 20 and len(clean) >= 5
    assert all(re.search(r"Stack Overflow \d+|the course's chapter", s.read_text()) for s in problems)


@pytest.mark.alone  # another process's load makes a pipeline wait: batch_size_one named input-bound under it
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_the_diagnosis_of_a_clinic_script(script, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no device card: its costs measured here
    label = expected(script)
    found = diagnose_script(script, steps=10, warmup=2, card="cached")
    codes, problems = set(found.codes()), [f.code for f in found.problems()]
    RESULTS[script.name] = {"expected": label, "codes": sorted(codes), "problems": problems}
    missed = set(label) - codes - KNOWN_MISSES.get(script.name, set())
    assert not missed, f"{script.name}: {sorted(missed)} not found\n{found.report(everything=True)}"
    if not label:  # a clean script, or a cause the tool does not know: no problem named
        assert problems == [] or OUTSIDE in script.read_text(), found.report(everything=True)
        return
    priced = [code for code in label if code not in DEVICE_DEPENDENT]
    if priced:  # the real cause is the first problem the report names
        assert problems and problems[0] in label, found.report(everything=True)
    assert set(problems) <= set(label), f"named but not a cause here:\n{found.report(everything=True)}"


@pytest.mark.alone  # in the process that diagnosed the scripts
def test_write_the_clinics_precision_and_recall():
    """Per finding code, over the scripts diagnosed above: what the report names (its problems, and the causes found
    that cost nothing without a device) against what was expected."""
    if len(RESULTS) < len(SCRIPTS):
        pytest.skip("run with the clinic's scripts")
    tally: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for result in RESULTS.values():
        # what the report names: its problems, and the causes it finds that cost nothing without a device
        named = set(result["problems"]) | (set(result["codes"]) & DEVICE_DEPENDENT)
        for code in set(result["expected"]) | named:
            hit = (code in result["expected"], code in named)
            tally[code][{(True, True): "tp", (False, True): "fp", (True, False): "fn"}[hit]] += 1
    table = {
        code: {
            **counts,
            "precision": counts["tp"] / (counts["tp"] + counts["fp"]) if counts["tp"] + counts["fp"] else None,
            "recall": counts["tp"] / (counts["tp"] + counts["fn"]) if counts["tp"] + counts["fn"] else None,
        }
        for code, counts in sorted(tally.items())
    }
    out = REPO / "test-artifacts"
    out.mkdir(exist_ok=True)
    (out / "clinic.json").write_text(json.dumps({"per_code": table, "scripts": RESULTS}, indent=1))
    assert table and sum(row.get("tp", 0) for row in table.values()) >= 20, table
