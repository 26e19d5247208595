"""The notebook lint (tfperf.authoring.nblint): each rule catches what it names, and every chapter passes it."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tests.conftest import REPO, assignments
from tfperf.authoring import nblint
from tfperf.authoring import notebooks as authoring

SETUP = "from tfperf import course\ninfo = course.start()"
TARGETS = {"09_demo.fast": {"cpu": 2.0, "gpu": 2.0}, "09_demo.cpu_only": {"cpu": 2.0}}


def write(tmp_path, cells, assignment="09_demo", setup=SETUP):
    setup_cell = new_code_cell(setup, metadata={"nbgrader": {"grade_id": "setup", "locked": True}})
    nb = new_notebook(cells=[new_markdown_cell("# Chapter 9 — Demo"), setup_cell, *cells])
    path = tmp_path / assignment / "demo.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def rules(problems):
    return sorted(p.rule for p in problems)


def test_a_clean_notebook_has_no_problems(tmp_path):
    path = write(
        tmp_path,
        [
            new_markdown_cell("## 1. Copies\n\nConverting once is faster: measure it."),
            new_code_cell(
                'grading.assert_speedup(f, g, exercise="09_demo.fast", section="1. Copies")\n%matplotlib inline'
            ),
            new_markdown_cell(
                "> *Quoted, not measured here:* an epoch went from 12 s to 2 minutes (94% busy, 10x).\n\n"
                "Speedups fall towards 1x; the loop runs `0.9 ** step` at most 2 × N times."
            ),
        ],
    )
    assert nblint.lint([path], TARGETS) == []


def test_section_must_name_a_heading(tmp_path):
    path = write(
        tmp_path,
        [new_markdown_cell("## 1. Copies"), new_code_cell('check(x, section="1. Copy")\ncheck(x, section=name)')],
    )
    problems = nblint.lint([path], TARGETS)
    assert rules(problems) == ["section-heading", "section-heading"]
    assert "'1. Copy' is not a heading" in str(problems[0]) and "cell 3" in str(problems[0])


def test_exercise_needs_a_target_for_every_device_class_under_its_assignment(tmp_path):
    path = write(
        tmp_path,
        [
            new_code_cell(
                'a(exercise="09_demo.cpu_only")\nb(exercise="09_demo.nothing")\n'
                'c(exercise="01_tensors.keep_data_on_device")'
            )
        ],
    )
    problems = nblint.lint([path], TARGETS)
    assert rules(problems) == ["exercise-target"] * 4
    assert "no gpu target" in problems[0].message and "no cpu/gpu target" in problems[1].message
    assert "does not start with this assignment's name" in problems[2].message


@pytest.mark.parametrize(
    "code",
    [
        "import time\nstart = time.perf_counter()",
        "t = time.time()",
        "from time import monotonic",
        "%timeit f()",
        "%%time\nf()",
        "import timeit",
        "datetime.datetime.now()",
        "time.process_time_ns()",
    ],
)
def test_clock_reads_in_code_are_flagged(tmp_path, code):
    assert rules(nblint.lint([write(tmp_path, [new_code_cell(code)])], TARGETS)) == ["no-clock"]


def test_clocks_in_markdown_and_sleep_are_fine(tmp_path):
    path = write(
        tmp_path,
        [
            new_markdown_cell("Never call `time.perf_counter()` or `%timeit` yourself."),
            new_code_cell("import time\ntime.sleep(0.01)"),
        ],
    )
    assert nblint.lint([path], TARGETS) == []


def test_unlabelled_figures_are_flagged_per_paragraph(tmp_path):
    path = write(
        tmp_path,
        [
            new_markdown_cell(
                "Printing made the loop about 3.5x slower.\n\n> *Quoted:* 40% longer.\n\nIt took 12 seconds, 80% busy."
            )
        ],
    )
    problems = nblint.lint([path], TARGETS)
    assert rules(problems) == ["quoted-label", "quoted-label"]
    assert "3.5x" in problems[0].message and "12 seconds, 80%" in problems[1].message


def test_setup_cells_must_all_be_the_same(tmp_path):
    a = write(tmp_path, [], "01_a")
    b = write(tmp_path, [], "02_b")
    c = write(tmp_path, [], "03_c", setup=SETUP + "\nprint('extra')")
    problems = nblint.lint_setup_cells([a, b, c])
    assert [(p.rule, p.path) for p in problems] == [("setup-cell", c)]


def test_lint_command_reports_and_fails_on_problems(tmp_path, monkeypatch, capsys):
    path = write(tmp_path, [new_code_cell("t = time.time()")])
    monkeypatch.setattr(authoring, "course_root", lambda: tmp_path)
    monkeypatch.setattr(authoring, "solution_notebooks", lambda root: [path])
    assert authoring.main(["lint"]) == 1
    out = capsys.readouterr().out
    assert "[no-clock]" in out and "1 problem(s) in 1 notebook(s)." in out


def test_every_setup_cell_is_the_same():
    paths = authoring.solution_notebooks(REPO)
    assert [str(p) for p in nblint.lint_setup_cells(paths)] == []


@pytest.mark.parametrize("assignment", assignments())
def test_every_chapter_passes_the_lint(assignment):
    paths = sorted((REPO / "solutions" / assignment).glob("*.ipynb"))
    problems = [p for path in paths for p in nblint.lint_notebook(path)]
    assert [str(p) for p in problems] == []


def test_the_retracing_demonstration_is_tagged_so_that_its_warning_is_checked():
    from tests.grading.test_roundtrip import EXPECTED_OUTPUT

    nb = nbformat.read(REPO / "solutions" / "02_eager_vs_graph" / "eager_vs_graph.ipynb", as_version=4)
    tagged = [c for c in nb.cells if "expect-retracing-warning" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and "expect-retracing-warning" in EXPECTED_OUTPUT
