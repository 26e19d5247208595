"""The resumable ledger (tfperf.classgrading.ledger)."""

import json
import multiprocessing

from tfperf.classgrading.ledger import FAILED, GRADED, REJECTED, STARTED, Entry, Ledger, submission_checksum


def test_checksum_follows_names_and_contents(tmp_path):
    (tmp_path / "a.ipynb").write_text("{}")
    first = submission_checksum(tmp_path)
    assert submission_checksum(tmp_path) == first
    (tmp_path / "a.ipynb").write_text("{ }")
    second = submission_checksum(tmp_path)
    assert second != first
    (tmp_path / "a.ipynb").rename(tmp_path / "b.ipynb")
    assert submission_checksum(tmp_path) not in (first, second)


def test_only_a_graded_unchanged_submission_counts_as_done(tmp_path):
    ledger = Ledger(tmp_path, "toy")
    assert not ledger.is_done("ann", "c1")
    ledger.write(Entry("ann", "toy", "c1", GRADED, score=3, max_score=5))
    ledger.write(Entry("bob", "toy", "c2", FAILED))
    ledger.write(Entry("cat", "toy", "c3", REJECTED))
    ledger.write(Entry("dan", "toy", "c4", GRADED))
    ledger.write(Entry("dan", "toy", "c4", STARTED))  # being graded again (--force): no longer done
    assert ledger.is_done("ann", "c1")
    assert not ledger.is_done("ann", "c-changed")
    assert not ledger.is_done("bob", "c2") and not ledger.is_done("cat", "c3") and not ledger.is_done("dan", "c4")
    assert ledger.read("ann").score == 3
    assert [e.student for e in ledger.entries()] == ["ann", "bob", "cat", "dan"]


def test_odd_student_ids_stay_inside_the_ledger(tmp_path):
    ledger = Ledger(tmp_path, "toy")
    for odd in ("../../etc", "a b", "x/y", ".."):
        path = ledger.write(Entry(odd, "toy", "c", REJECTED))
        assert path.parent == ledger.folder
        assert ledger.read(odd).student == odd
    assert sorted(ledger.students()) == sorted(["../../etc", "a b", "x/y", ".."])


def _hammer(folder: str, worker: int) -> None:
    ledger = Ledger(__import__("pathlib").Path(folder), "toy")
    for i in range(200):
        ledger.write(Entry(f"s{worker}", "toy", f"c{i}", GRADED, problems=["x" * 1000]))
        ledger.write(Entry("shared", "toy", f"w{worker}-{i}", GRADED, problems=["y" * 1000]))


def test_concurrent_writers_never_leave_a_broken_file(tmp_path):
    """Four processes rewrite their own file and one shared file 200 times each; a reader meanwhile
    and afterwards sees only complete entries, and no temporary file is left behind."""
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_hammer, args=(str(tmp_path), w)) for w in range(4)]
    for w in workers:
        w.start()
    ledger = Ledger(tmp_path, "toy")
    reads = 0
    while any(w.is_alive() for w in workers):
        for entry in ledger.entries():  # raises on a half-written file
            assert entry.problems
            reads += 1
    for w in workers:
        w.join()
        assert w.exitcode == 0
    assert reads > 0
    assert {e.student for e in ledger.entries()} == {"s0", "s1", "s2", "s3", "shared"}
    assert ledger.read("s2").checksum == "c199"
    assert not list(ledger.folder.glob(".tmp-*"))
    for path in ledger.folder.glob("*.json"):
        json.loads(path.read_text())
