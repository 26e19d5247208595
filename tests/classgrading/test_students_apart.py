"""Students cannot reach each other's files through links (real nbgrader, the course's sandboxed kernel).

Issue 24's red team: a kernel that replaced its own notebook with a link to another student's graded
notebook made nbgrader write over it (the victim lost points), and a submitted link reached outside its
folder.
"""

from __future__ import annotations

import nbformat

from tests.classgrading import toy
from tfperf.autograding.preprocessors import RemoveLinks, odd_entries

# Run by the kernel: its own notebook becomes a link to bob's graded one (pathlib, which the screen allows).
LINK_OVER_BOB = """\
from pathlib import Path
mine = Path("toy.ipynb")
mine.unlink()
mine.symlink_to("../../bob/toy/toy.ipynb")
def square(x):
    return x * x"""


def test_a_kernel_cannot_make_nbgrader_write_over_another_students_graded_notebook(toy_course):
    reference = toy.variant("reference", toy.released(toy_course))
    toy.submit(toy_course, "bob", reference)
    toy.submit(toy_course, "eve", toy.with_answer(reference, "answer_square", LINK_OVER_BOB))
    done = toy.grade(toy_course, "--no-progress")  # one by one, in the order of their names: bob, then eve
    assert done.returncode == 0, done.stdout + done.stderr
    bobs = toy_course / "autograded" / "bob" / toy.ASSIGNMENT / toy.NOTEBOOK
    eves = toy_course / "autograded" / "eve" / toy.ASSIGNMENT / toy.NOTEBOOK
    assert not eves.is_symlink() and eves.is_file()  # eve's graded notebook is in her own folder
    assert "symlink_to" in eves.read_text() and "symlink_to" not in bobs.read_text()  # and bob's is still his
    assert toy.scores(toy_course)["bob"] == dict(
        zip(("check_square", "check_total"), map(float, toy.EXPECTED["reference"]))
    )
    assert nbformat.read(bobs, as_version=4).cells and nbformat.read(eves, as_version=4).cells


def test_a_submission_holding_a_link_is_not_graded_and_nobody_else_is_touched(toy_course):
    reference = toy.variant("reference", toy.released(toy_course))
    toy.submit(toy_course, "bob", reference)
    eve = toy.submit(toy_course, "eve", None)
    (eve / toy.NOTEBOOK).symlink_to(f"../../bob/{toy.ASSIGNMENT}/{toy.NOTEBOOK}")  # bob's work handed in as hers
    done = toy.grade(toy_course, "--no-progress")
    scores = toy.scores(toy_course)
    assert scores["bob"] == dict(zip(("check_square", "check_total"), map(float, toy.EXPECTED["reference"])))
    assert not any(scores.get("eve", {}).values())  # nothing earned by bob's work
    assert not (toy_course / "autograded" / "eve" / toy.ASSIGNMENT / toy.NOTEBOOK).exists()
    log = (toy_course / "reports" / "logs" / toy.ASSIGNMENT / "eve.log").read_text()
    assert "links or special files (toy.ipynb)" in log, done.stdout + done.stderr


def test_remove_links_leaves_plain_files_and_removes_links_and_pipes(tmp_path):
    (tmp_path / "notebook.ipynb").write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.txt").write_text("ok")
    (tmp_path / "sub" / "away").symlink_to("/etc")
    (tmp_path / "out.ipynb").symlink_to(tmp_path.parent / "elsewhere.ipynb")
    import os

    os.mkfifo(tmp_path / "pipe")
    assert odd_entries(tmp_path) == ["out.ipynb", "pipe", "sub/away"]
    RemoveLinks().preprocess(nbformat.v4.new_notebook(), {"metadata": {"path": str(tmp_path)}})
    assert odd_entries(tmp_path) == []
    assert (tmp_path / "notebook.ipynb").read_text() == "{}" and (tmp_path / "sub" / "data.txt").is_file()
