"""The static screen of answer cells: honest answers pass untouched, tampering is flagged with its line."""

from pathlib import Path

import nbformat
import pytest

from tfperf.autograding.screen import allowed_imports, defined_names, screen, withheld_names

ROOT = Path(__file__).resolve().parents[3]


def _answer_cells():
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        given = set()
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code":
                continue
            if meta.get("solution"):
                yield path.parent.name, meta["grade_id"], cell.source, set(given), cell.metadata.get("tfperf", {})
            elif meta.get("locked"):
                given |= defined_names(cell.source)


@pytest.mark.parametrize(
    "chapter, grade_id, source, given, imports",
    list(_answer_cells()),
    ids=[f"{c}-{g}" for c, g, *_ in _answer_cells()],
)
def test_every_reference_answer_passes_the_screen(chapter, grade_id, source, given, imports):
    """With the imports its own exercise allows: every answer cell of the course lists them."""
    assert isinstance(imports.get("imports"), list), f"{grade_id} lists no imports (metadata tfperf.imports)"
    rules = {"metadata": {"tfperf": imports}}
    assert (
        screen(source, given_names=given, allowed_imports=allowed_imports(rules), withheld=withheld_names(rules)) == []
    )


@pytest.mark.parametrize(
    "source, flagged",
    [
        ("def place(f, b, c):\n    return dc.regime(c, f, b)", "uses dc.regime, which this exercise withholds"),
        ("def place(f, b, c):\n    return getattr(dc, 'floors')(c, f, b)", "uses dc.floors, which"),
        (
            "m = dc\ndef place(f, b, c):\n    return m.regime(c, f, b)",
            "uses dc otherwise than by one of its attributes",
        ),
        ("def place(f, b, c, d=dc):\n    return d.regime(c, f, b)", "uses dc otherwise than by one of its attributes"),
        ("from tfperf.experiments.device_ceilings import regime", "imports tfperf.experiments.device_ceilings"),
    ],
)
def test_a_withheld_library_function_is_flagged_however_it_is_reached(source, flagged):
    findings = screen(source, allowed_imports=(), withheld=("dc.regime", "dc.floors"))
    assert any(flagged in f.describe() for f in findings), findings


def test_chapter_5s_training_loop_may_not_read_the_checks_count_of_steps():
    """``gpu_sync.steps_run`` is what the report checks count with: an answer that read it could tell a timed call
    from the others by how far the count moved (tests/grading/judge_boundary/reports_timed_calls_attacked.py)."""
    rules = next(
        meta for chapter, grade_id, _, _, meta in _answer_cells() if (chapter, grade_id) == ("05_gpu_sync", "train")
    )
    withheld = withheld_names({"metadata": {"tfperf": rules}})
    findings = screen("def train(w0, xs, ys, report, every):\n    return gpu_sync.steps_run()", withheld=withheld)
    assert any("uses gpu_sync.steps_run, which this exercise withholds" in f.describe() for f in findings), findings
    assert screen("def train(w0, xs, ys, report, every):\n    return gpu_sync.train_steps", withheld=withheld) == []


def test_the_other_attributes_of_a_module_with_withheld_functions_stay_allowed():
    assert screen("def place(f, b, c):\n    return dc.REGIMES[0]", withheld=("dc.regime",)) == []
    assert screen("def place(f, b, c):\n    return dc.regime(c, f, b)") == []  # withheld in no exercise here


@pytest.mark.parametrize(
    "source, flagged",
    [
        (
            "import tfperf.grading.targets\ntfperf.grading.targets.target_for = lambda *a: 0.0",
            "tfperf.grading.targets.target_for, an attribute",
        ),
        ("tf.convert_to_tensor = slow", "tf.convert_to_tensor, an attribute of a module"),
        ("import os\nos.environ['TFPERF_TARGETS'] = 'x'", "os.environ"),
        ("import os\nos.dup2(os.open(os.devnull, os.O_WRONLY), 2)", "uses os.dup2"),
        ("from os import close\nclose(1)", "imports os.close"),
        ("tf.config.run_functions_eagerly(True)", "TensorFlow switch"),
        ("import threading\nthreading.Thread(target=f).start()", "imports threading"),
        ("get_ipython().input_transformers_post.append(f)", "calls get_ipython()"),
        ("vars(gpu_sync)['train_step'] = f", "calls vars()"),
        ("gpu_sync.__dict__['train_step'] = f", "__dict__"),
        ("from tfperf.measure import host_syncs\nhost_syncs._patches._restore()", "private part of the course library"),
        ("setattr(np, 'allclose', f)", "calls setattr()"),
        ("def train_unfixed(*a):\n    pass", "redefines train_unfixed"),
        ("open('/work/autograde/gradebook.db', 'w')", "outside the working directory"),
        ("import sys\nsys.modules['tfperf.grading'] = fake", "sys.modules"),
        ("exec('x = 1')", "calls exec()"),
        # The allow-list (issue 24's red team): modules no answer needs, whatever they are.
        (
            "import IPython\nIPython.get_ipython().ast_transformers.append(t)",
            "imports IPython, which no answer to this exercise needs",
        ),
        ("from operator import attrgetter\nattrgetter('assert_speedup')(grading)", "imports operator"),
        ("import traceback\ntraceback.extract_stack()", "imports traceback"),
        ("def f():\n    return sys.modules", "uses sys.modules"),
        ("sys.stdout = open('log.txt', 'w')", "assigns sys.stdout, an attribute of a module"),
        ("sys.addaudithook(hook)", "uses sys.addaudithook"),
        ("caller = sys.exc_info()[2]", "uses sys.exc_info"),
        ("ip = get_ipython", "uses get_ipython"),
        ("In[-1]", "uses In, which no answer needs"),
        ("view = memoryview(buffer)", "uses memoryview"),
        (
            "try:\n    1 / 0\nexcept Exception as e:\n    caller = e.__traceback__.tb_frame.f_back",
            "tb_frame, a part of the call stack",
        ),
        ("def g():\n    yield\nframe = g().gi_frame", "gi_frame, a part of the call stack"),
        ("PREDICTOR.predict = slow_predict", "PREDICTOR.predict, an attribute of PREDICTOR, which a locked cell"),
        ("del PREDICTOR.layers", "deletes PREDICTOR.layers, an attribute of PREDICTOR"),
        (
            "class Eager(keras.Sequential):\n    def make_train_function(self, force=False):\n        self.train_function = f",
            "defines make_train_function in class Eager",
        ),
        ("f.__code__ = g.__code__", "__code__"),
        ("store._reads = 0", "store._reads, a private attribute"),
        ("store._seconds_waited += 100.0", "store._seconds_waited, a private attribute"),
        ("del store._latency", "deletes store._latency"),
        ("stores[0]._reads = 0", "a private attribute"),
        ("for store._reads in [0]:\n    pass", "store._reads, a private attribute"),
        ("def fast(store):\n    store._latency = 0.0", "store._latency, a private attribute"),
        ("def reset(self):\n    self._reads = 0", "self._reads, a private attribute"),  # not a method
        ("class A:\n    def m(self, other):\n        other._reads = 0", "other._reads, a private attribute"),
        ("class A:\n    def m(self):\n        def f(self):\n            self._reads = 0", "self._reads"),
        ("class A:\n    def m(self):\n        self = store\n        self._reads = 0", "rebinds self"),
        ("class Reset:\n    def go(self):\n        self._reads = 0\nReset.go(store)", "gets the method Reset.go"),
        ("class Reset:\n    def go(self):\n        self._reads = 0\n    again = go\nReset.again(store)", "Reset.again"),
        ("class Reset:\n    def go(self):\n        self._reads = 0\ntype(Reset()).go(store)", "through type(...)"),
        ("class A:\n    def m(self):\n        (self := store)\n        self._reads = 0", "rebinds self"),
        # The class hidden behind another name, or reached from a subclass, runs its method on any object.
        (
            "class Reset:\n    def go(self):\n        self._reads = 0\nAlias = Reset\nAlias.go(store)",
            "passes the class Reset",
        ),
        (
            "class Reset:\n    def go(self):\n        self._reads = 0\ngetattr(Reset, 'go')(store)",
            "passes the class Reset",
        ),
        ("class Reset:\n    def go(self):\n        self._reads = 0\n[Reset][0].go(store)", "passes the class Reset"),
        (
            "class Reset:\n    def go(self):\n        self._reads = 0\nReset.mro()[0].go(store)",
            "passes the class Reset",
        ),
        (
            "class Reset:\n    def go(self):\n        self._reads = 0\nclass Sub(Reset):\n    pass\nSub.go(store)",
            "gets the method Sub.go",
        ),
        ("getattr(store, '_records')", "private attribute _records"),
        ("getattr(store, name)", "computed attribute name"),
        ("tf_data._state.clear()", "tf_data._state, a private part of the course library"),
    ],
)
def test_tampering_is_flagged_with_its_line(source, flagged):
    findings = screen(source, given_names={"train_unfixed", "PREDICTOR"})
    assert any(flagged in f.what for f in findings), findings
    assert all(f.line >= 1 for f in findings)


def test_ordinary_code_is_not_flagged():
    source = (
        "import numpy as np\nimport math, time\n"
        "class Model:\n    def __init__(self):\n        self.w = 1\n"
        "m = Model()\nm.w = 2\nresults = {}\nresults['a'] = 1\n"
        "with open('notes.txt', 'w') as f:\n    f.write('ok')\n"
        "w = tf.Variable(1.0)\nw.assign(2.0)\nprint(len([1]), sys_version := 3)\n"
    )
    assert screen(source) == []


@pytest.mark.parametrize(
    "source",
    [
        "def row_scores(table, weights, steps):\n    w = weights * 2\n    return w",
        "def f():\n    for w in range(3):\n        pass\n    with open('notes.txt') as table_inputs:\n        pass",
        "def f():\n    def table_inputs():\n        return 1\n    return table_inputs()",
        "class Scorer:\n    w = 1\n    def table_inputs(self):\n        return self.w",
        "scores = [w * 2 for w in range(3)]",
        "f = lambda w: (w := w + 1)",
    ],
)
def test_a_name_bound_inside_a_function_class_or_comprehension_is_not_a_given_one(source):
    """A local spelled like a name a locked cell defines (``w``, ``table_inputs``) rebinds nothing of the cell's:
    flagging it zeroed honest answers (chapter 1's ``w = weights.numpy()`` was screened out, not graded)."""
    assert screen(source, given_names={"w", "table_inputs"}) == []


@pytest.mark.parametrize(
    "source",
    [
        "w = 2",
        "def table_inputs():\n    return 1",
        "class w:\n    pass",
        "for w in range(3):\n    pass",
        "[(w := 1) for _ in range(3)]",
        "def f():\n    global w\n    w = 2",
    ],
)
def test_a_given_name_rebound_at_the_cells_top_level_is_flagged(source):
    assert any("w" in f.what or "table_inputs" in f.what for f in screen(source, given_names={"w", "table_inputs"}))


def test_a_class_of_the_cell_may_set_its_own_private_attributes():
    source = (
        "class Counter:\n"
        "    def __init__(self, start):\n        self._count = start\n"
        "    def add(self, n):\n        self._count += n\n"
        "        def inner():\n            self._count -= 0\n        inner()\n"
        "    @classmethod\n    def zero(cls):\n        cls._made = True\n        return cls(0)\n"
        "c = Counter.zero()\nc.add(2)\nvalue = getattr(c, 'add')\n"
        "class Slow(Counter):\n"
        "    def __init__(self, start: 'Counter' = None) -> Counter:\n        super(Slow, self).__init__(0)\n"
        "def make(kind: Counter) -> Counter:\n    return Slow() if isinstance(kind, Counter) else kind\n"
        "assert issubclass(Slow, Counter) and Counter.__name__ == 'Counter' and Slow.zero()\n"
    )
    assert screen(source) == []


def test_source_that_does_not_parse_is_left_to_the_kernel():
    assert screen("def broken(:\n") == []


def test_a_subclass_of_a_library_class_may_not_define_private_methods():
    source = (
        "class Describes(type(slow)):\n    def __init__(self, a):\n        super().__init__(a, 1)\n"
        "    def _as_serialized_graph(self, *args):\n        return good._as_serialized_graph(*args)\n"
        "class Own:\n    def _helper(self):\n        return 1\n"
        "class Sub(Own):\n    def _helper(self):\n        return 2\n"
        "class Plain(object):\n    def _helper(self):\n        return 3\n"
    )
    findings = screen(source)
    assert [f.line for f in findings] == [4], [f.describe() for f in findings]
    assert "_as_serialized_graph in class Describes, a subclass of type(slow)" in findings[0].describe()


def test_an_exercise_may_allow_fewer_imports():
    from tfperf.autograding.screen import ALLOWED_IMPORTS, allowed_imports

    assert screen("import tempfile", allowed_imports=("numpy",))[0].what.startswith("imports tempfile")
    assert screen("import numpy as np", allowed_imports=("numpy",)) == []
    assert "its answers import nothing" in screen("import math", allowed_imports=())[0].what
    assert allowed_imports({"metadata": {"tfperf": {"imports": ["numpy"]}}}) == ("numpy",)
    assert allowed_imports({"metadata": {}}) == ALLOWED_IMPORTS


def _library_modules_bound_by_notebooks() -> set[str]:
    """Every name a solution notebook binds to a module of the course library (``from tfperf.x import y as z``)."""
    import ast
    import importlib.util

    def is_module(dotted: str) -> bool:
        try:
            return importlib.util.find_spec(dotted) is not None
        except (ModuleNotFoundError, ValueError):  # an attribute of a module, not a module
            return False

    names = set()
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tfperf"):
                    names |= {a.asname or a.name for a in node.names if is_module(f"{node.module}.{a.name}")}
    return names


def test_every_library_module_a_notebook_binds_is_known_to_the_screen():
    """Private names of the course library are flagged by the module's name in the notebook: a module bound under a
    name the screen does not know (chapter 7's ``bod``, chapter 8's ``cs``) would let ``bod._note(...)`` through."""
    from tfperf.autograding.screen import LIBRARY_MODULES

    assert sorted(_library_modules_bound_by_notebooks() - set(LIBRARY_MODULES)) == []
    assert screen("bod._note(0, 32)\n", given_names=set()) != []
