"""Concept checks graded from the answer cell's text in the grading process."""

from tfperf.grading import concepts

TESTS = {
    "q1_tests": (
        "from tfperf.grading import concepts\n"
        'concepts.check_form(tape_records, question="1")\n'
        "### BEGIN HIDDEN TESTS\n"
        'concepts.check_answer(tape_records, "b", question="1", section="2. The tape")\n'
        "### END HIDDEN TESTS"
    ),
    "q2_tests": 'concepts.check_answer(retraces, "d", question="2", options="abcd")',
}


def test_right_letters_pass_and_a_wrong_one_names_the_section():
    outcomes = concepts.grade(TESTS, 'tape_records = "B "\nretraces = "c"')
    printed, error = outcomes["q1_tests"]
    assert error is None and "question 1 right" in printed
    printed, error = outcomes["q2_tests"]
    assert printed == "" and error == "Question 2: not the right answer."
    _, error = concepts.grade(TESTS, 'tape_records = "a"\nretraces = "d"')["q1_tests"]
    assert error == 'Question 1: not the right answer. Reread the section "2. The tape".'


def test_only_literals_as_written_count_the_last_one_wins():
    computed = 'tape_records = chr(98)\nretraces = "d"'
    assert "as one letter in quotes" in concepts.grade(TESTS, computed)["q1_tests"][1]
    last = 'tape_records = "a"\ntape_records = "b"\nretraces = "d"'
    assert all(error is None for _, error in concepts.grade(TESTS, last).values())
    # An object equal to everything, or a letter set in a function, is not a letter as written.
    for trick in (
        "class Any(str):\n    __eq__ = lambda self, other: True\ntape_records = Any('a')",
        'tape_records = "b" if False else "a"',
        'def set_it():\n    global tape_records\n    tape_records = "b"\nset_it()',
        'tape_records, retraces = "bd"',
        'tape_records, *rest = "b", "d"',
    ):
        assert concepts.grade(TESTS, trick)["q1_tests"][1] is not None, trick


def test_letters_assigned_in_one_statement_count_each():
    """The visible check records each; so does the grading process (an honest answer the red team saw rejected)."""
    for honest in (
        'tape_records, retraces = "b", "d"',
        '(tape_records, retraces) = ("b", "d")',
        '[tape_records, retraces] = ["b", "d"]',
        'tape_records: str = "b"\nretraces = "d"',
    ):
        assert all(error is None for _, error in concepts.grade(TESTS, honest).values()), honest
    # an item or an attribute set with the letter as its key binds no name; an annotation alone assigns nothing
    honest = 'tape_records = "b"\nnotes = {}\nnotes[tape_records] = "why"\nretraces: str\nretraces = "d"'
    assert all(error is None for _, error in concepts.grade(TESTS, honest).values())
    _, error = concepts.grade(TESTS, 'tape_records, retraces = "b", "c"')["q2_tests"]
    assert error == "Question 2: not the right answer."


def test_missing_or_malformed_answers_say_what_to_write():
    _, error = concepts.grade(TESTS, 'retraces = "d"')["q1_tests"]
    assert error == 'Question 1: no answer: assign it in the answer cell, tape_records = "a".'
    _, error = concepts.grade(TESTS, 'tape_records = "abcd"')["q1_tests"]
    assert error == "Question 1: answer with one letter, one of a, b, c, d."
    assert concepts.grade(TESTS, "this is not python")["q1_tests"][1] is not None
    deep = "x = " + "+".join(["1"] * 200_000)  # ast.parse raises RecursionError, not SyntaxError
    assert concepts.grade(TESTS, deep)["q1_tests"][1] is not None


def test_an_exercise_with_any_other_check_is_not_graded_here():
    assert concepts.grade({"t": "grading.check_function(f, (1,), 2)"}, "") is None
    mixed = dict(TESTS, other='concepts.check_answer(x, "a", question="3")\nimport os\nos.system("true")')
    assert concepts.grade(mixed, 'x = "a"') is None
    assert concepts.grade({"t": 'concepts.check_form(x, question="1")'}, 'x = "a"') is None  # no right answer
