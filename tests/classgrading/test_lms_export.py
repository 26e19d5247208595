"""``python -m tfperf export``: a real nbgrader gradebook and a roster with problems, into Canvas's and Moodle's
gradebook-import CSV files (tfperf.classgrading.lms; docs/lms-export.md). No grading run, no TensorFlow.

The files are checked against the formats as documented and as the importers' code reads them (the URLs are in
tfperf.classgrading.lms): no live Canvas or Moodle is reachable from here.
"""

from __future__ import annotations

import csv
import re
import warnings
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from tfperf import cli
from tfperf.classgrading import lms

# assignment -> notebook cells and their max scores; 02_eager has no submission.
CELLS = {
    "01_tensors": {"t1": 5.0, "t2": 7.5},  # 12.5 points
    "02_eager": {"e1": 4.0},
    "08_capstone": {"c1": 10.0, "c2": 3.0},  # 13 points
}
# student -> assignment -> auto scores per cell (absent: no submission)
SCORES = {
    "ada": {"01_tensors": [5, 7.5], "08_capstone": [10, 3]},
    "bob": {"01_tensors": [0.1, 0.2], "08_capstone": [4, 0]},  # 0.30000000000000004
    "cyd": {"01_tensors": [3, 2]},  # 1 point late penalty: 4
    "dee": {"08_capstone": [6.25, 1]},  # c2 still needs manual grading
    "eve": {"01_tensors": [2, 2], "08_capstone": [1, 1]},  # not in the roster
}
LATE = {("cyd", "01_tensors"): 1.0}
MANUAL = {("dee", "08_capstone", "c2")}

# The roster as Excel writes it (a byte-order mark), with spaces around bob's id, eve missing, fay without any
# submission, a name with a comma and one with a non-ASCII letter; an email column for Moodle (ignored by Canvas).
ROSTER = (
    "\ufeffnbgrader_id,name,canvas_id,sis_user_id,sis_login_id,section,email\n"
    'ada,"Lovelace, Ada",101,S001,ada@uni.edu,Sec A,ada@uni.edu\n'  # line 2
    " bob ,Bob Zoë,102,S002,bob@uni.edu,Sec A,bob@uni.edu\n"  # line 3
    "cyd,Cyd Charisse,103,,cyd@uni.edu,Sec B,cyd@uni.edu\n"  # line 4
    "dee,Dee,104,S004,,Sec B,Dee@Uni.edu\n"  # line 5
    "fay,Fay,105,S006,fay@uni.edu,Sec B,fay@uni.edu\n"  # line 6
)

CANVAS_ROWS = [
    ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "01_tensors", "08_capstone"],
    ["Points Possible", "", "", "", "", "12.5", "13"],
    ["Lovelace, Ada", "101", "S001", "ada@uni.edu", "Sec A", "12.5", "13"],
    ["Bob Zoë", "102", "S002", "bob@uni.edu", "Sec A", "0.3", "4"],
    ["Cyd Charisse", "103", "", "cyd@uni.edu", "Sec B", "4", ""],
    ["Dee", "104", "S004", "", "Sec B", "", "7.25"],
    ["Fay", "105", "S006", "fay@uni.edu", "Sec B", "", ""],
]
MOODLE_ROWS = [
    ["email", "01_tensors", "08_capstone"],
    ["ada@uni.edu", "12.5", "13"],
    ["bob@uni.edu", "0.3", "4"],
    ["cyd@uni.edu", "4", "-"],
    ["Dee@Uni.edu", "-", "7.25"],
    ["fay@uni.edu", "-", "-"],
]


def _make_gradebook(db: Path) -> None:
    with warnings.catch_warnings():  # nbgrader's add_submission makes SQLAlchemy warn about its autoflush
        warnings.simplefilter("ignore")
        with Gradebook(f"sqlite:///{db}") as gb:
            for assignment, cells in CELLS.items():
                gb.add_assignment(assignment)
                gb.add_notebook("nb", assignment)
                for cell, points in cells.items():
                    gb.add_grade_cell(cell, "nb", assignment, max_score=points, cell_type="code")
            for student, submitted in SCORES.items():
                gb.add_student(student)
                for assignment, scores in submitted.items():
                    gb.add_submission(assignment, student)
                    for cell, score in zip(CELLS[assignment], scores):
                        grade = gb.find_grade(cell, "nb", assignment, student)
                        grade.auto_score = score
                        grade.needs_manual_grade = (student, assignment, cell) in MANUAL
                    penalty = LATE.get((student, assignment))
                    if penalty:
                        gb.find_submission_notebook("nb", assignment, student).late_submission_penalty = penalty
            gb.db.commit()


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """An nbgrader course folder holding only its gradebook.db."""
    folder = tmp_path_factory.mktemp("lms") / "autograde"
    folder.mkdir()
    _make_gradebook(folder / "gradebook.db")
    return folder


@pytest.fixture
def roster(tmp_path) -> Path:
    path = tmp_path / "roster.csv"
    path.write_bytes(ROSTER.encode("utf-8"))
    return path


def export(course: Path, roster: Path, out: Path, *extra: str, lms_name: str = "canvas") -> int:
    argv = ["export", "--lms", lms_name, "--roster", str(roster), "--course", str(course), "--output", str(out)]
    return cli.main([*argv, *extra])


def read_rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def _title_and_id(header: str) -> tuple[str, str | None]:
    """Canvas's Assignment.title_and_id: "Title (123)" is assignment 123."""
    match = re.fullmatch(r"(.*)\s\((\d+)\)", header)
    return match.groups() if match else (header, None)


def canvas_reads(path: Path) -> dict:
    """What Canvas's importer (lib/gradebook_importer.rb) takes from the file: its checks of the header, the
    points row, each student's ids and each assignment's title and id."""
    header, *rows = read_rows(path)
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1]  # row_has_student_headers?
    student_columns = 3
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        student_columns += 1
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        student_columns += 2
    assert "Section" in header[student_columns - 1]  # header?: the last identity column is Section
    assignments = [_title_and_id(h) for h in header[student_columns:]]
    points = [r for r in rows if "Points Possible" in r[0]]
    students = [r for r in rows if "Points Possible" not in r[0]]
    return {
        "assignments": assignments,
        "points": points[0][student_columns:] if points else None,
        "students": {(r[1], r[2], r[3]): r[student_columns:] for r in students},
    }


# --- Canvas


def test_canvas_file_header_points_row_and_rows_exactly(course, roster, tmp_path):
    out = tmp_path / "canvas.csv"
    assert export(course, roster, out, "--allow-unmatched") == 0
    assert read_rows(out) == CANVAS_ROWS


def test_canvas_reads_its_header_points_and_student_ids(course, roster, tmp_path):
    out = tmp_path / "canvas.csv"
    export(course, roster, out, "--allow-unmatched", "--column", "08_capstone=Capstone (1234)")
    read = canvas_reads(out)
    assert read["assignments"] == [("01_tensors", None), ("Capstone", "1234")]  # a new one, and assignment 1234
    assert read["points"] == ["12.5", "13"]
    assert read["students"][("101", "S001", "ada@uni.edu")] == ["12.5", "13"]
    assert read["students"][("104", "S004", "")] == ["", "7.25"]


def test_canvas_file_is_utf8_without_a_bom_and_quotes_commas(course, roster, tmp_path):
    out = tmp_path / "canvas.csv"
    export(course, roster, out, "--allow-unmatched")
    raw = out.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8")
    assert "Bob Zoë" in text
    assert text.splitlines()[2] == '"Lovelace, Ada",101,S001,ada@uni.edu,Sec A,12.5,13'


def test_missing_as_zero_fills_cells_without_a_submission(course, roster, tmp_path):
    out = tmp_path / "canvas.csv"
    assert export(course, roster, out, "--allow-unmatched", "--missing-as-zero") == 0
    assert [r[5:] for r in read_rows(out)[2:]] == [["12.5", "13"], ["0.3", "4"], ["4", "0"], ["0", "7.25"], ["0", "0"]]


# --- Moodle


def test_moodle_file_identifier_column_and_no_grade_marker(course, roster, tmp_path, capsys):
    out = tmp_path / "moodle.csv"
    assert export(course, roster, out, "--allow-unmatched", lms_name="moodle") == 0
    assert read_rows(out) == MOODLE_ROWS
    assert not out.read_bytes().startswith(b"\xef\xbb\xbf")
    assert "Map from email to useremail" in capsys.readouterr().out


def test_moodle_identifier_follows_moodle_id(course, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("nbgrader_id,idnumber\nada,A-1\nbob,B-2\n", encoding="utf-8")
    out = tmp_path / "moodle.csv"
    assert export(course, roster, out, "--allow-unmatched", "--moodle-id", "idnumber", lms_name="moodle") == 0
    assert read_rows(out) == [["idnumber", "01_tensors", "08_capstone"], ["A-1", "12.5", "13"], ["B-2", "0.3", "4"]]


# --- students never silently dropped


def test_unmatched_and_missing_students_are_listed_and_exit_1(course, roster, tmp_path, capsys):
    out = tmp_path / "canvas.csv"
    assert export(course, roster, out) == 1
    assert out.is_file()  # written all the same: a script sees the status, the instructor the lists
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert "Graded in nbgrader but not in the roster, so not in the file (the LMS could not match them): eve" in err
    assert "01_tensors: no submission from dee, fay (cells left empty: no grade)" in err
    assert "08_capstone: no submission from cyd, fay (cells left empty: no grade)" in err
    assert f"{roster}:1: byte-order mark (Excel's 'CSV UTF-8') ignored" in err
    assert f"{roster}:3: spaces around 'bob' (nbgrader_id) removed" in err
    assert any(
        line.startswith(f"In {roster} but no student of the gradebook") and "fay (line 6)" in line for line in err
    )
    assert "08_capstone: dee still needs manual grading: the scores written count only what is graded" in err
    assert "--allow-unmatched" in err[-1]
    assert captured.out.splitlines()[-1] == (
        "Summary: 5 students written, 1 graded but not in the roster, 3 in the roster without a submission."
    )


def test_allow_unmatched_exits_0_and_still_lists_them(course, roster, tmp_path, capsys):
    assert export(course, roster, tmp_path / "canvas.csv", "--allow-unmatched") == 0
    assert "not in the file (the LMS could not match them): eve" in capsys.readouterr().err


def test_moodle_lists_the_no_grade_marker(course, roster, tmp_path, capsys):
    export(course, roster, tmp_path / "moodle.csv", lms_name="moodle")
    assert "08_capstone: no submission from cyd, fay (cells '-': no grade)" in capsys.readouterr().err.splitlines()


# --- the roster's problems: line numbers, exit 2, nothing written

HEADER = "nbgrader_id,name,canvas_id,sis_user_id,sis_login_id,section\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            HEADER + "ada,Ada,101,,,A\nbob,Bob,102,,,A\nada,Ada again,103,,,A\n",
            ":4: duplicate nbgrader_id 'ada' (also on line 2)",
        ),
        (HEADER + "ada,Ada,101,,,A\nbob,Bob,101,,,A\n", ":3: duplicate canvas_id '101' (also on line 2)"),
        (
            HEADER + 'ada,"Ada\nLovelace",101,,,A\nbob,Bob,102,,,A\nbob,Bob,103,,,A\n',
            ":5: duplicate nbgrader_id 'bob' (also on line 4)",
        ),
        (HEADER + "ada,Ada,101,,,A\n,Nobody,102,,,A\n", ":3: empty nbgrader_id"),
        (
            HEADER + "ada,Ada,,,,A\n",
            ":2: empty canvas_id, sis_user_id and sis_login_id: Canvas could not match the student",
        ),
        (HEADER + "ada,Ada,1.01E+02,,,A\n", ":2: canvas_id '1.01E+02' is not Canvas's user id (digits only)"),
        (HEADER + "ada,Ada,101,,,A,extra\n", ":2: 7 cells, the header has 6"),
        ("nbgrader_id,name,sis_user_id,section\nada,Ada,S1,A\n", ":1: no column canvas_id, sis_login_id in the header"),
        ("nbgrader_id;name;canvas_id\nada;Ada;101\n", "the file is separated by ';': save it comma-separated"),
        (HEADER, "no students, only the header"),
    ],
    ids=[
        "duplicate-id",
        "duplicate-canvas-id",
        "quoted-newline",
        "empty-id",
        "no-lms-id",
        "excel-number",
        "extra-cell",
        "missing-column",
        "semicolons",
        "header-only",
    ],
)
def test_roster_problems_are_reported_with_their_line_and_nothing_is_written(course, tmp_path, capsys, text, expected):
    roster = tmp_path / "roster.csv"
    roster.write_text(text, encoding="utf-8")
    out = tmp_path / "canvas.csv"
    out.write_text("the previous export\n", encoding="utf-8")
    assert export(course, roster, out, "--allow-unmatched") == 2
    err = capsys.readouterr().err
    assert (f"tfperf export: {roster}{expected}" if expected.startswith(":") else expected) in err
    assert err.splitlines()[-1] == "tfperf export: nothing written."
    assert out.read_text(encoding="utf-8") == "the previous export\n"


def test_a_roster_not_in_utf8_is_refused_with_its_line(course, tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_bytes((HEADER + "ada,Ada,101,,,A\nbob,Bob Zoë,102,,,A\n").encode("cp1252"))
    out = tmp_path / "canvas.csv"
    assert export(course, roster, out) == 2
    assert f"{roster}:3: not UTF-8 (byte 0xEB): save it as 'CSV UTF-8 (Comma delimited)'" in capsys.readouterr().err
    assert not out.exists()


def test_moodle_roster_problems(course, tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text("nbgrader_id,email\nada,ada@uni.edu\nbob,ADA@uni.edu\ncyd,\ndee,nobody\n", encoding="utf-8")
    out = tmp_path / "moodle.csv"
    assert export(course, roster, out, lms_name="moodle") == 2
    err = capsys.readouterr().err.splitlines()
    assert f"tfperf export: {roster}:3: duplicate email 'ADA@uni.edu' (also on line 2)" in err
    assert f"tfperf export: {roster}:4: empty email" in err
    assert f"tfperf export: {roster}:5: email 'nobody' has no @" in err
    assert not out.exists()
    assert export(course, roster, out, "--moodle-id", "username", lms_name="moodle") == 2
    assert f"{roster}:1: no column username in the header" in capsys.readouterr().err


# --- assignments, columns, gradebook


def test_default_assignments_have_submissions_and_given_ones_keep_their_order(course, roster, tmp_path):
    out = tmp_path / "canvas.csv"
    export(course, roster, out, "--allow-unmatched")
    assert read_rows(out)[0][5:] == ["01_tensors", "08_capstone"]  # 02_eager has no submission
    export(course, roster, out, "--allow-unmatched", "--assignment", "08_capstone", "02_eager")
    assert [r[5:] for r in read_rows(out)[:3]] == [["08_capstone", "02_eager"], ["13", "4"], ["13", ""]]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--assignment", "99_nope"], "the gradebook has no assignment 99_nope"),
        (["--column", "08_capstone"], "--column '08_capstone': write ASSIGNMENT=COLUMN NAME"),
        (["--column", "02_eager=Eager"], "--column '02_eager=Eager': 02_eager is not exported"),
        (["--column", "08_capstone=Final Score"], "Canvas ignores a column named with 'Final Score'"),
        (["--column", "08_capstone=Section"], "column 'Section' (08_capstone): the name of another column"),
    ],
)
def test_bad_assignments_and_columns_exit_2(course, roster, tmp_path, capsys, extra, expected):
    out = tmp_path / "canvas.csv"
    assert export(course, roster, out, *extra) == 2
    assert expected in capsys.readouterr().err
    assert not out.exists()


def test_db_url_and_the_default_output(course, roster, tmp_path, capsys):
    elsewhere = tmp_path / "autograde"
    elsewhere.mkdir()
    argv = ["export", "--lms", "canvas", "--roster", str(roster), "--course", str(elsewhere), "--allow-unmatched"]
    assert cli.main(argv) == 2  # no gradebook there: refused, and none created
    assert "no gradebook at" in capsys.readouterr().err
    assert not (elsewhere / "gradebook.db").exists()
    assert cli.main([*argv, "--db-url", f"sqlite:///{course / 'gradebook.db'}"]) == 0
    written = elsewhere / "reports" / "canvas-grades.csv"
    assert read_rows(written) == CANVAS_ROWS
    assert capsys.readouterr().out.splitlines()[0] == (
        f"Wrote {written}: 5 students, 2 assignments (01_tensors: 12.5 points, 08_capstone: 13 points)."
    )


@pytest.mark.parametrize(
    ("score", "text"),
    [(12.5, "12.5"), (13.0, "13"), (0.1 + 0.2, "0.3"), (1 / 3, "0.3333"), (2.00004, "2"), (-0.0, "0"), (7.25, "7.25")],
)
def test_scores_are_written_without_float_noise(score, text):
    assert lms.format_score(score) == text
