"""grading.assert_memory_flat in the learner's own process, and the readings under it (tfperf.runtime.processes)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tfperf import grading
from tfperf.runtime import processes

MB = 1_000_000


def test_what_a_process_holds_follows_the_large_objects_it_keeps_and_frees():
    with processes.large_frees_returned() as set_here:
        assert set_here
        before = processes.held_bytes(os.getpid())
        kept = np.ones(40 * MB // 8)
        grown = processes.held_bytes(os.getpid()) - before
        del kept
        freed = processes.held_bytes(os.getpid()) - before
    assert 38 * MB < grown < 48 * MB and freed < 4 * MB, (grown, freed)


def test_a_childs_memory_counts_as_its_parents():
    """A child holding 64 MB: its own reading has them, and its parent's grows by as much while it lives."""
    before = processes.held_bytes(os.getpid())
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, numpy as np; a = np.ones(8_000_000); print(1, flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        child.stdout.readline()
        assert processes.held_bytes(child.pid) > 60 * MB
        assert processes.held_bytes(os.getpid()) - before > 60 * MB
    finally:
        child.kill()
        child.wait()


def _epochs(keep: bool):
    kept = []

    def train(epochs, on_epoch_end):
        for epoch in range(epochs):
            block = np.ones(20 * MB // 8)
            if keep:
                kept.append(block)
            on_epoch_end(epoch)
        return epochs

    return train


def test_memory_that_stays_flat_passes_and_a_leak_fails_with_what_each_epoch_added():
    assert grading.assert_memory_flat(_epochs(keep=False), (6,), what="the loop") == 6
    with pytest.raises(grading.GradingFailure, match=r"the loop held 6\d\.\d MB more .* than 3 epochs before") as err:
        grading.assert_memory_flat(_epochs(keep=True), (6,), what="the loop", section="8. Progressive slowdown")
    assert "+20.0" in str(err.value) and "8. Progressive slowdown" in str(err.value)


def test_fewer_than_four_epochs_cannot_show_a_trend():
    with pytest.raises(grading.GradingFailure, match="called on_epoch_end 3 times"):
        grading.assert_memory_flat(_epochs(keep=False), (3,), what="the loop")
