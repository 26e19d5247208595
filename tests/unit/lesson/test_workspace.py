import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tfperf.lesson import workspace

BADGE = (
    "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
    "(https://colab.research.google.com/github/your-org/tf-gpu-performance/blob/main/notebooks/01_a/a.ipynb)"
)


def write_notebook(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_markdown_cell(f"# {text}"), new_code_cell("x = 1")]), path)


def first_cell(path) -> str:
    return nbformat.read(path, as_version=4).cells[0].source


def test_prepare_copies_new_notebooks_and_never_overwrites(tmp_path):
    write_notebook(tmp_path / "notebooks" / "01_a" / "a.ipynb", "course v1")
    copied, kept = workspace.prepare(tmp_path)
    mine = tmp_path / "my-work" / "01_a" / "a.ipynb"
    assert copied == [mine] and kept == [] and first_cell(mine) == "# course v1"

    write_notebook(mine, "my answers")
    write_notebook(tmp_path / "notebooks" / "01_a" / "a.ipynb", "course v2")
    write_notebook(tmp_path / "notebooks" / "02_b" / "b.ipynb", "new chapter")
    copied, kept = workspace.prepare(tmp_path)
    assert first_cell(mine) == "# my answers" and kept == [mine]
    assert [p.name for p in copied] == ["b.ipynb"]


def test_the_learners_copy_has_no_colab_badge_and_keeps_the_rest(tmp_path):
    source = tmp_path / "notebooks" / "01_a" / "a.ipynb"
    nb = new_notebook(cells=[new_markdown_cell(BADGE + "\n\n# Chapter 1\n\nText."), new_code_cell("x = 1")])
    source.parent.mkdir(parents=True)
    nbformat.write(nb, source)
    workspace.prepare(tmp_path)
    copy = nbformat.read(tmp_path / "my-work" / "01_a" / "a.ipynb", as_version=4)
    assert copy.cells[0].source == "# Chapter 1\n\nText."
    assert copy.cells[1].source == "x = 1" and len(copy.cells) == 2
    assert "colab" not in nbformat.writes(copy).lower()


def test_the_first_start_opens_chapter_one_and_later_starts_do_not(tmp_path):
    write_notebook(tmp_path / "notebooks" / "01_tensors" / "tensors_and_devices.ipynb", "chapter 1")
    workspace.prepare(tmp_path)
    assert workspace.first_start(tmp_path) == "01_tensors/tensors_and_devices.ipynb"
    assert (tmp_path / "my-work" / "01_tensors" / "tensors_and_devices.ipynb").is_file()
    assert workspace.first_start(tmp_path) is None  # JupyterLab reopens what the learner left open
    assert workspace.first_start(tmp_path / "elsewhere") is None  # no copies: nothing to open
