from tfperf.lesson import workspace


def test_prepare_copies_new_notebooks_and_never_overwrites(tmp_path):
    (tmp_path / "notebooks" / "01_a").mkdir(parents=True)
    (tmp_path / "notebooks" / "01_a" / "a.ipynb").write_text("course v1")
    copied, kept = workspace.prepare(tmp_path)
    mine = tmp_path / "my-work" / "01_a" / "a.ipynb"
    assert copied == [mine] and kept == [] and mine.read_text() == "course v1"

    mine.write_text("my answers")
    (tmp_path / "notebooks" / "01_a" / "a.ipynb").write_text("course v2")
    (tmp_path / "notebooks" / "02_b").mkdir()
    (tmp_path / "notebooks" / "02_b" / "b.ipynb").write_text("new chapter")
    copied, kept = workspace.prepare(tmp_path)
    assert mine.read_text() == "my answers" and kept == [mine]
    assert [p.name for p in copied] == ["b.ipynb"]
