"""Checking submissions before grading (tfperf.classgrading.submissions), against a real gradebook."""

import nbformat
import pytest

from tests.classgrading import toy
from tfperf.classgrading.submissions import AssignmentCells, check, collect


@pytest.fixture(scope="module")
def cells(toy_template):
    return AssignmentCells.load(f"sqlite:///{toy_template / 'gradebook.db'}", toy.ASSIGNMENT)


def folder_with(tmp_path, files: dict):
    folder = tmp_path / "sub"
    folder.mkdir(parents=True)
    for name, content in files.items():
        if isinstance(content, str):
            (folder / name).write_text(content)
        else:
            nbformat.write(content, folder / name)
    return folder


def test_the_released_notebook_and_the_reference_pass_clean(toy_template, cells, tmp_path):
    for kind in ("untouched", "reference"):
        folder = folder_with(tmp_path / kind, {toy.NOTEBOOK: toy.variant(kind, toy.released(toy_template))})
        sub = check("ann", folder, cells)
        assert sub.gradable and not sub.anomalies and not sub.warnings, (kind, sub)
        assert sub.notebooks == ["toy"]


def test_each_bad_submission_says_why(toy_template, cells, tmp_path):
    reference = toy.variant("reference", toy.released(toy_template))
    cases = {
        "missing": ({"notes.txt": "I forgot"}, "missing notebook(s) toy.ipynb (no notebook found)"),
        "renamed": ({"Toy (1).ipynb": reference}, "missing notebook(s) toy.ipynb (found: Toy (1).ipynb)"),
        "invalid": (
            {toy.NOTEBOOK: '{"cells": [ truncated'},
            "toy.ipynb cannot be read as a notebook (NotJSONError: Notebook does not appear to be JSON",
        ),
        "other": ({toy.NOTEBOOK: toy.other_assignment_notebook()}, "its cells are other's"),
    }
    for name, (files, reason) in cases.items():
        sub = check("ann", folder_with(tmp_path / name, files), cells)
        assert not sub.gradable and reason in " ".join(sub.problems), (name, sub.problems)
    sub = check("bad id!", folder_with(tmp_path / "odd", {toy.NOTEBOOK: reference}), cells)
    assert not sub.gradable and "student id 'bad id!' has characters" in sub.problems[0]


def test_an_extra_notebook_is_a_warning_only(toy_template, cells, tmp_path):
    reference = toy.variant("reference", toy.released(toy_template))
    sub = check("ann", folder_with(tmp_path, {toy.NOTEBOOK: reference, "scratch.ipynb": reference}), cells)
    assert sub.gradable and sub.notebooks == ["toy"]
    assert sub.warnings == ["extra notebook scratch.ipynb is not part of the assignment: not graded"]


def test_edited_or_deleted_test_cells_are_anomalies(toy_template, cells, tmp_path):
    nb = toy.variant("reference", toy.released(toy_template))
    check_square = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "check_square")
    check_square.source = "assert True"
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "check_total"]
    sub = check("ann", folder_with(tmp_path, {toy.NOTEBOOK: nb}), cells)
    assert sub.gradable
    assert [k for k, _ in sub.anomalies] == ["locked cell changed", "cell deleted"]
    assert "check_square" in sub.anomalies[0][1] and "check_total" in sub.anomalies[1][1]


def test_collect_lists_every_folder_and_asked_for_students(toy_course):
    toy.submit(toy_course, "ann", toy.variant("reference", toy.released(toy_course)))
    toy.submit(toy_course, "bob", None)
    cells = AssignmentCells.load(f"sqlite:///{toy_course / 'gradebook.db'}", toy.ASSIGNMENT)
    assert [s.student for s in collect(toy_course, toy.ASSIGNMENT, cells)] == ["ann", "bob"]
    subs = collect(toy_course, toy.ASSIGNMENT, cells, ["ann", "zed"])
    assert subs[0].gradable and "no submission" in subs[1].problems[0]
    with pytest.raises(LookupError, match="generate_assignment"):
        AssignmentCells.load(f"sqlite:///{toy_course / 'gradebook.db'}", "nope")
