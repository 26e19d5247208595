"""Grades into the LMS: nbgrader's scores as the CSV file that Canvas's or Moodle's gradebook imports.

``python -m tfperf export --lms canvas|moodle --roster ROSTER.csv`` reads each student's score (nbgrader's own:
the submission's score less its late penalty, at least 0, as ``nbgrader export`` computes it) and each
assignment's max score from the gradebook, maps nbgrader's student ids to the LMS's through a roster, and writes
one CSV file (docs/lms-export.md).

The roster: a UTF-8 CSV file with a header. ``nbgrader_id`` and, for Canvas, ``name``, ``canvas_id``,
``sis_user_id``, ``sis_login_id``, ``section`` (the identity columns of Canvas's own gradebook export, at least one
of the three ids filled in); for Moodle, the column named by ``--moodle-id``: ``email``, ``username``, ``idnumber``
or ``userid``. Other columns are ignored (one roster can serve both). A missing column, an empty or duplicate id,
or a file that is not UTF-8 makes it unusable: every problem is reported with its line and nothing is written.
Excel's byte-order mark and spaces around values are removed, with a note.

Canvas (Grades > Import). Canvas's guide to the import
(https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807) is not
in the stored copies reachable from here; the format follows the code that reads the file and what the pages
below say of it:

- header ``Student,ID,SIS User ID,SIS Login ID,Section`` then one column per assignment: the importer requires
  "Student" then "ID" first and "Section" last among the identity columns, "SIS Login ID" right after "SIS User
  ID" (``header?``, ``update_column_count`` in
  https://github.com/instructure/canvas-lms/blob/master/lib/gradebook_importer.rb; the order of Canvas's own
  export, lib/gradebook_exporter.rb);
- a student is matched by ID (Canvas's user id) first, then SIS User ID, then SIS Login ID, then by name
  (``process_student``); one of these is required
  (https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades);
- an assignment column ``Title (123)`` is the existing assignment 123 (``Assignment.title_and_id``: a space, then
  digits in brackets); any other title is an existing assignment of exactly that title, or a new assignment
  (the OSU page: "New assignment columns in the Gradebook generate new assignments");
- a row whose first cell contains "Points Possible" is read as the assignments' points (``process_pp``); written
  second, as Canvas's export does: a new assignment gets those points;
- a column whose name contains "Current Score", "Final Grade" etc. is not an assignment
  (``NON_ASSIGNMENT_COLUMN_HEADERS``): such names are refused here;
- an empty cell is "no grade": where Canvas holds a grade, the import removes it, highlighted on the review
  page before anything is saved (``shouldHighlightScoreChange`` in
  ui/features/gradebook_uploads/jquery/index.js; ``populateGradeDataPerSubmission`` posts the empty grade);
- UTF-8; Canvas's export adds a byte-order mark only when a user asks for one, and the importer finds its
  headers with or without it: written without.

Moodle (Grades > Import > CSV file; https://docs.moodle.org/311/en/Grade_import,
https://docs.moodle.org/27/en/Grade_import, and grade/import/csv/classes/load_data.php in
https://github.com/moodle/moodle):

- a header row, then one row per student: one identifier column, named as the roster's column (``email``, ...),
  which the instructor maps ("Map from" that column, "Map to" useremail, username, useridnumber or userid), and one
  column per grade item, each mapped to an existing grade item or to "new grade item";
- the form's Encoding is UTF-8 and Separator Comma, as written here (Moodle converts from the chosen encoding and
  drops a byte-order mark: lib/csvlib.class.php);
- a row whose user is not found stops the whole import (``check_user_exists``), and a row with an empty
  identifier keeps the previous row's user: hence a usable roster has no empty id;
- "-" or an empty cell is "no grade" for an existing grade item (it replaces one Moodle holds); for a new grade
  item only "-" is left out: an empty cell is stored, and Moodle's database layer stores '' as 0 in a number
  column. No grade is therefore written "-";
- no points row (a row whose identifier is no user stops the import): the command prints each assignment's
  points for the grade item's maximum; grades above 100 need the site's 'unlimitedgrades' setting (Note 2).

Scores are written with at most 4 decimals and no trailing zeros (12.5, 13, 0.3, not 0.30000000000000004).
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tfperf.classgrading.batch import default_db_url

CANVAS, MOODLE = "canvas", "moodle"
LMSES = (CANVAS, MOODLE)
#: --moodle-id choices -> what Moodle's "Map to" calls the user field.
MOODLE_MAP_TO = {"email": "useremail", "username": "username", "idnumber": "useridnumber", "userid": "userid"}
MOODLE_IDS = tuple(MOODLE_MAP_TO)
#: Moodle's "no grade" (an empty cell would be a 0 in a new grade item).
MOODLE_NO_GRADE = "-"

#: Canvas's identity columns, in the order its importer requires, and the roster column each comes from.
CANVAS_COLUMNS = {
    "Student": "name",
    "ID": "canvas_id",
    "SIS User ID": "sis_user_id",
    "SIS Login ID": "sis_login_id",
    "Section": "section",
}
#: Roster columns whose values identify a Canvas student (one at least is needed, none may repeat).
CANVAS_ID_FIELDS = ("canvas_id", "sis_user_id", "sis_login_id")
CANVAS_POINTS_ROW = "Points Possible"
#: Column names Canvas's importer does not take for assignments (lib/gradebook_importer.rb).
CANVAS_NOT_ASSIGNMENTS = (
    "Current Score",
    "Current Points",
    "Current Grade",
    "Final Score",
    "Final Points",
    "Final Grade",
    "Override Score",
    "Override Grade",
    "Override Status",
)

BOM = "\ufeff"
SCORE_DECIMALS = 4


class ExportError(Exception):
    """Problems that leave nothing written (the command exits 2): one line each."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


def roster_columns(lms: str, moodle_id: str = "email") -> tuple[str, ...]:
    """The columns a roster for this LMS must have."""
    if lms == CANVAS:
        return ("nbgrader_id", *CANVAS_COLUMNS.values())
    return ("nbgrader_id", moodle_id)


@dataclass(frozen=True)
class RosterStudent:
    nbgrader_id: str
    line: int  # the roster line the student's row starts on
    fields: dict[str, str]  # the roster's required columns, stripped


@dataclass
class Roster:
    path: Path
    students: list[RosterStudent]
    notes: list[str] = field(default_factory=list)  # what was fixed on the way (a BOM, spaces)


def _decode(path: Path, raw: bytes) -> tuple[str, list[str]]:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ExportError(f"{path}: UTF-16 (Excel's 'Unicode Text'): save it as 'CSV UTF-8 (Comma delimited)'")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ExportError(
            f"{path}:{line}: not UTF-8 (byte 0x{raw[err.start]:02X}): save it as 'CSV UTF-8 (Comma delimited)'"
        ) from None
    notes = []
    if text.startswith(BOM):
        text = text[1:]
        notes.append(f"{path}:1: byte-order mark (Excel's 'CSV UTF-8') ignored")
    return text, notes


def read_roster(path: Path, lms: str, moodle_id: str = "email") -> Roster:
    """The roster's students, in its order; :class:`ExportError` lists every problem that makes it unusable."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ExportError(f"{path}: cannot read the roster ({err.strerror or err})") from None
    text, notes = _decode(path, raw)
    reader = csv.reader(io.StringIO(text, newline=""))
    rows, last = [], 0
    for cells in reader:
        rows.append((last + 1, cells))
        last = reader.line_num
    rows = [(line, cells) for line, cells in rows if any(c.strip() for c in cells)]
    if not rows:
        raise ExportError(f"{path}: empty: the roster needs a header and one row per student")

    required = roster_columns(lms, moodle_id)
    header_line, header = rows[0]
    names = [h.strip().lower() for h in header]
    problems = []
    missing = [c for c in required if c not in names]
    if missing:
        hint = (
            " (the file is separated by ';': save it comma-separated)" if len(header) == 1 and ";" in header[0] else ""
        )
        problems.append(
            f"{path}:{header_line}: no column {', '.join(missing)} in the header{hint}; "
            f"a {lms} roster has {', '.join(required)}"
        )
    for name in {n for n in names if n and names.count(n) > 1}:
        problems.append(f"{path}:{header_line}: column {name} appears twice in the header")
    if problems:
        raise ExportError(problems)
    if len(rows) == 1:
        raise ExportError(f"{path}: no students, only the header")

    index = {name: names.index(name) for name in required}
    students, first_seen = [], {}  # (column, value) -> line
    for line, cells in rows[1:]:
        if len(cells) > len(header):
            problems.append(f"{path}:{line}: {len(cells)} cells, the header has {len(header)}")
            continue
        fields = {}
        for column, i in index.items():
            value = cells[i] if i < len(cells) else ""
            if value != value.strip() and value.strip():
                notes.append(f"{path}:{line}: spaces around {value.strip()!r} ({column}) removed")
            fields[column] = value.strip()
        problems += _row_problems(path, line, fields, lms, moodle_id, first_seen)
        students.append(RosterStudent(fields["nbgrader_id"], line, fields))
    if problems:
        raise ExportError(problems)
    return Roster(path, students, notes)


def _row_problems(path, line, fields, lms, moodle_id, first_seen) -> list[str]:
    problems = []
    where = f"{path}:{line}"
    if not fields["nbgrader_id"]:
        problems.append(f"{where}: empty nbgrader_id")
    if lms == CANVAS:
        ids = [c for c in CANVAS_ID_FIELDS if fields[c]]
        if not ids:
            problems.append(
                f"{where}: empty canvas_id, sis_user_id and sis_login_id: Canvas could not match the student"
            )
        if fields["canvas_id"] and not fields["canvas_id"].isdigit():
            problems.append(f"{where}: canvas_id {fields['canvas_id']!r} is not Canvas's user id (digits only)")
    else:
        ids = [moodle_id]
        value = fields[moodle_id]
        if not value:
            problems.append(f"{where}: empty {moodle_id}")
        elif moodle_id == "userid" and not value.isdigit():
            problems.append(f"{where}: userid {value!r} is not Moodle's user id (digits only)")
        elif moodle_id == "email" and "@" not in value:
            problems.append(f"{where}: email {value!r} has no @")
    for column in ("nbgrader_id", *ids):
        value = fields[column]
        if not value:
            continue
        key = (column, value.lower() if column == "email" else value)  # Moodle's emails differ only by case: one person
        if key in first_seen:
            problems.append(f"{where}: duplicate {column} {value!r} (also on line {first_seen[key]})")
        else:
            first_seen[key] = line
    return problems


@dataclass
class AssignmentScores:
    name: str
    max_score: float
    scores: dict[str, float]  # nbgrader student id -> score (late penalty taken off)
    needs_manual_grade: list[str] = field(default_factory=list)


@dataclass
class GradebookScores:
    assignments: list[AssignmentScores]
    students: set[str]  # every student id in the gradebook


def read_gradebook(db_url: str, names: list[str] | None = None) -> GradebookScores:
    """The scores of the named assignments (default: every assignment with a submission), in the gradebook's order."""
    from nbgrader.api import Gradebook
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    try:
        url = make_url(db_url)
    except SQLAlchemyError:
        raise ExportError(f"--db-url {db_url!r} is no database URL (e.g. postgresql://user@host/db)") from None
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        if not Path(url.database).is_file():  # nbgrader would create an empty gradebook there
            raise ExportError(f"no gradebook at {url.database} (--course or --db-url)")
    try:
        with Gradebook(db_url) as gb:
            known = [a.name for a in gb.assignments]
            if names:
                names = list(dict.fromkeys(names))
                unknown = [n for n in names if n not in known]
                if unknown:
                    raise ExportError(
                        f"the gradebook has no assignment {', '.join(unknown)} (it has: {', '.join(known) or 'none'})"
                    )
            else:
                names = [a.name for a in gb.assignments if a.num_submissions]
                if not names:
                    raise ExportError("the gradebook has no submission: nothing to export")
            found = []
            for name in names:
                assignment = gb.find_assignment(name)
                scores, manual = {}, []
                for submission in gb.assignment_submissions(name):
                    penalty = float(submission.late_submission_penalty or 0.0)
                    scores[submission.student_id] = max(0.0, float(submission.score) - penalty)
                    if submission.needs_manual_grade:
                        manual.append(submission.student_id)
                found.append(AssignmentScores(name, float(assignment.max_score), scores, sorted(manual)))
            return GradebookScores(found, {s.id for s in gb.students})
    except SQLAlchemyError as err:
        cause = getattr(err, "orig", None) or err
        reason = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        raise ExportError(f"cannot read the gradebook {url.render_as_string(hide_password=True)}: {reason}") from None


def format_score(value: float) -> str:
    """A score as the LMS should read it: 12.5, 13, 0.3 (rounded to 4 decimals, no trailing zeros)."""
    text = f"{round(value, SCORE_DECIMALS):.{SCORE_DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def column_names(specs: list[str], assignments: list[str], lms: str, moodle_id: str = "email") -> dict[str, str]:
    """Each assignment's column name: its nbgrader name, or NAME from an ``ASSIGNMENT=NAME`` spec."""
    names = {a: a for a in assignments}
    problems = []
    for spec in specs:
        assignment, sep, name = spec.partition("=")
        assignment, name = assignment.strip(), name.strip()
        if not sep or not name:
            problems.append(f"--column {spec!r}: write ASSIGNMENT=COLUMN NAME, e.g. '08_capstone=Capstone (1234)'")
        elif assignment not in names:
            problems.append(f"--column {spec!r}: {assignment} is not exported (exported: {', '.join(assignments)})")
        else:
            names[assignment] = name
    taken = set(CANVAS_COLUMNS) if lms == CANVAS else {moodle_id}
    for assignment, name in names.items():
        if name in taken:
            problems.append(f"column {name!r} ({assignment}): the name of another column")
        taken.add(name)
        if lms == CANVAS:
            bad = [word for word in CANVAS_NOT_ASSIGNMENTS if word in name]
            if bad:
                problems.append(f"column {name!r} ({assignment}): Canvas ignores a column named with {bad[0]!r}")
            if CANVAS_POINTS_ROW in name:
                problems.append(f"column {name!r} ({assignment}): {CANVAS_POINTS_ROW!r} marks Canvas's points row")
    if problems:
        raise ExportError(problems)
    return names


@dataclass
class Options:
    lms: str
    roster: Path
    course: Path
    assignments: list[str] | None = None  # default: every assignment with a submission
    db_url: str | None = None  # default: SQLite in the course
    output: Path | None = None  # default: COURSE/reports/<lms>-grades.csv
    moodle_id: str = "email"
    columns: list[str] = field(default_factory=list)  # ASSIGNMENT=COLUMN NAME
    missing_as_zero: bool = False


@dataclass
class Outcome:
    output: Path
    lms: str
    assignments: list[AssignmentScores]
    columns: dict[str, str]  # assignment -> column name
    written: int  # student rows written
    unmatched: list[str]  # graded in nbgrader, not in the roster: not written
    missing: dict[str, list[str]]  # assignment -> roster students without a submission (roster order)
    notes: list[str] = field(default_factory=list)
    missing_cell: str = ""  # what their cells hold
    moodle_id: str | None = None  # Moodle's identifier column

    @property
    def without_submission(self) -> list[str]:
        """Roster students missing from at least one exported assignment, without repeats."""
        return list(dict.fromkeys(s for ids in self.missing.values() for s in ids))


def default_output(course: Path, lms: str) -> Path:
    return course / "reports" / f"{lms}-grades.csv"


def rows(roster: Roster, found: list[AssignmentScores], columns: dict[str, str], missing_cell: str, moodle_id=None):
    """The CSV file's rows, header first: Canvas's when ``moodle_id`` is None, else Moodle's."""
    if moodle_id is None:
        yield [*CANVAS_COLUMNS, *(columns[a.name] for a in found)]
        yield [CANVAS_POINTS_ROW, *([""] * (len(CANVAS_COLUMNS) - 1)), *(format_score(a.max_score) for a in found)]
        identity = list(CANVAS_COLUMNS.values())
    else:
        yield [moodle_id, *(columns[a.name] for a in found)]
        identity = [moodle_id]
    for student in roster.students:
        cells = [
            format_score(a.scores[student.nbgrader_id]) if student.nbgrader_id in a.scores else missing_cell
            for a in found
        ]
        yield [*(student.fields[c] for c in identity), *cells]


def write_csv(path: Path, lines) -> None:
    """UTF-8 without a byte-order mark, comma-separated; replaced at once, so a failed run leaves no half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            csv.writer(out).writerows(lines)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(options: Options) -> Outcome:
    """Read the roster and the gradebook, write the LMS's file; :class:`ExportError` when nothing could be written."""
    if options.lms not in LMSES:
        raise ExportError(f"unknown LMS {options.lms!r} (canvas or moodle)")
    if options.lms == MOODLE and options.moodle_id not in MOODLE_IDS:
        raise ExportError(f"--moodle-id {options.moodle_id!r}: one of {', '.join(MOODLE_IDS)}")
    roster = read_roster(options.roster, options.lms, options.moodle_id)
    gradebook = read_gradebook(options.db_url or default_db_url(options.course), options.assignments)
    found = gradebook.assignments
    columns = column_names(options.columns, [a.name for a in found], options.lms, options.moodle_id)
    notes = list(roster.notes)
    in_roster = {s.nbgrader_id for s in roster.students}
    strangers = [f"{s.nbgrader_id} (line {s.line})" for s in roster.students if s.nbgrader_id not in gradebook.students]
    if strangers:
        notes.append(
            f"In {roster.path} but no student of the gradebook (no submission at all, or a typo in nbgrader_id?): "
            + ", ".join(strangers)
        )
    for a in found:
        if a.needs_manual_grade:
            verb = "needs" if len(a.needs_manual_grade) == 1 else "need"
            notes.append(
                f"{a.name}: {', '.join(a.needs_manual_grade)} still {verb} manual grading: "
                "the scores written count only what is graded"
            )
    unmatched = sorted({s for a in found for s in a.scores} - in_roster)
    missing = {a.name: [s.nbgrader_id for s in roster.students if s.nbgrader_id not in a.scores] for a in found}
    missing_cell = "0" if options.missing_as_zero else (MOODLE_NO_GRADE if options.lms == MOODLE else "")
    output = options.output or default_output(options.course, options.lms)
    moodle_id = options.moodle_id if options.lms == MOODLE else None
    write_csv(output, rows(roster, found, columns, missing_cell, moodle_id))
    return Outcome(
        output, options.lms, found, columns, len(roster.students), unmatched, missing, notes, missing_cell, moodle_id
    )


def report_lines(outcome: Outcome) -> tuple[list[str], list[str]]:
    """What the command prints: (stdout lines, stderr lines)."""
    out, err = [], list(outcome.notes)
    points = ", ".join(f"{outcome.columns[a.name]}: {format_score(a.max_score)} points" for a in outcome.assignments)
    out.append(
        f"Wrote {outcome.output}: {_count(outcome.written, 'student')}, "
        f"{_count(len(outcome.assignments), 'assignment')} ({points})."
    )
    if outcome.moodle_id:
        out.append(
            f"In Moodle: Encoding UTF-8, Separator Comma; Map from {outcome.moodle_id} to "
            f"{MOODLE_MAP_TO[outcome.moodle_id]}; each column to its grade item (maximum grade: the points above)."
        )
    if outcome.unmatched:
        err.append(
            "Graded in nbgrader but not in the roster, so not in the file (the LMS could not match them): "
            + ", ".join(outcome.unmatched)
        )
    cells = f"cells {outcome.missing_cell!r}" if outcome.missing_cell else "cells left empty"
    meaning = "" if outcome.missing_cell == "0" else ": no grade"
    for assignment, students in outcome.missing.items():
        if students:
            err.append(f"{assignment}: no submission from {', '.join(students)} ({cells}{meaning})")
    out.append(
        f"Summary: {_count(outcome.written, 'student')} written, {len(outcome.unmatched)} graded but not in the "
        f"roster, {len(outcome.without_submission)} in the roster without a submission."
    )
    return out, err


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
