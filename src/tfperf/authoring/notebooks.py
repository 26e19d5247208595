"""Keep the course's notebooks clean and the student versions in sync (for contributors).

    python -m tfperf.authoring normalize [--check]   strip outputs, stable JSON and cell ids
    python -m tfperf.authoring release               notebooks/ <- nbgrader generate_assignment solutions/
    python -m tfperf.authoring check                 fail unless notebooks/ is what nbgrader generates
    python -m tfperf.authoring lint                  the named rules of tfperf.authoring.nblint, on solutions/
    python -m tfperf.authoring launch                Colab/Binder badges, Colab metadata and setup cells
                                                     from pyproject.toml's [tool.tfperf.launch], then release

``solutions/`` is the single source; ``notebooks/`` is generated and never edited by hand.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from tfperf.authoring import launch, nblint
from tfperf.runtime.checkout import course_root

_VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_KEEP_CELL_METADATA = ("nbgrader", "tfperf", "tags", "editable", "deletable")
_KEEP_NOTEBOOK_METADATA = ("kernelspec", "language_info", "accelerator", "colab")


def assignments(root: Path) -> list[str]:
    """Assignment names: the folders of ``solutions/`` that hold notebooks."""
    return sorted(p.name for p in (root / "solutions").iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def normalize(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """No outputs or execution counts, only meaningful metadata, stable unique cell ids."""
    nb.metadata = nbformat.from_dict({k: nb.metadata[k] for k in _KEEP_NOTEBOOK_METADATA if k in nb.metadata})
    if "language_info" in nb.metadata:
        nb.metadata.language_info = {"name": nb.metadata.language_info.get("name", "python")}
    seen: set[str] = set()
    for cell in nb.cells:
        cell.metadata = nbformat.from_dict({k: cell.metadata[k] for k in _KEEP_CELL_METADATA if k in cell.metadata})
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        if "attachments" in cell and not cell.attachments:
            del cell["attachments"]
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell_id = cell.get("id", "")
        if grade_id and _VALID_ID.match(grade_id):
            cell_id = grade_id
        elif not _VALID_ID.match(cell_id) or cell_id in seen:
            cell_id = "cell-" + hashlib.sha1(cell.source.encode()).hexdigest()[:8]
        while cell_id in seen:
            cell_id = "cell-" + hashlib.sha1(cell_id.encode()).hexdigest()[:8]
        cell.id = cell_id
        seen.add(cell_id)
    nb.nbformat, nb.nbformat_minor = 4, max(nb.get("nbformat_minor", 5), 5)
    return nb


def normalized_text(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return nbformat.writes(normalize(nb)) + "\n"


def notebooks_in_git_folders(root: Path) -> list[Path]:
    return sorted([*(root / "solutions").glob("*/*.ipynb"), *(root / "notebooks").glob("*/*.ipynb")])


def normalize_all(root: Path, *, check: bool = False) -> list[Path]:
    """Normalize every notebook of solutions/ and notebooks/; return those that changed (or would)."""
    changed = []
    for path in notebooks_in_git_folders(root):
        text = normalized_text(path)
        if path.read_text(encoding="utf-8") != text:
            changed.append(path)
            if not check:
                path.write_text(text, encoding="utf-8")
    return changed


def _nbgrader() -> str:
    exe = Path(sys.executable).parent / "nbgrader"
    return str(exe) if exe.exists() else "nbgrader"


def generate(course_dir: Path, assignment: str, *, database: bool = True) -> None:
    """Run ``nbgrader generate_assignment`` in ``course_dir`` (an ``autograde/`` folder)."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    cmd = [_nbgrader(), "generate_assignment", assignment, "--force"] + ([] if database else ["--no-db"])
    result = subprocess.run(cmd, cwd=course_dir, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"nbgrader generate_assignment {assignment} failed:\n{result.stdout}\n{result.stderr}")


def finish_student_versions(root: Path, name: str) -> list[Path]:
    """Normalization of the notebooks nbgrader generated into ``root/notebooks/name`` (their placeholders come
    from nbgrader itself: ``tfperf.autograding.preprocessors.ClearSolutionsWithPlaceholders``, in autograde/nbgrader_config.py)."""
    written = []
    for path in sorted((root / "notebooks" / name).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        path.write_text(nbformat.writes(normalize(nb)) + "\n", encoding="utf-8")
        written.append(path)
    return written


def release(root: Path) -> list[Path]:
    """Regenerate notebooks/ from solutions/ and normalize the result."""
    written = []
    for name in assignments(root):
        generate(root / "autograde", name)
        written += finish_student_versions(root, name)
    return written


def out_of_sync(root: Path) -> list[str]:
    """Differences between notebooks/ and a fresh generation from solutions/ (empty: in sync)."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp_root = Path(tmp)
        shutil.copytree(root / "solutions", tmp_root / "solutions")
        (tmp_root / "autograde").mkdir()
        shutil.copy(root / "autograde" / "nbgrader_config.py", tmp_root / "autograde")
        (tmp_root / "notebooks").mkdir()
        for name in assignments(tmp_root):
            generate(tmp_root / "autograde", name, database=False)
            finish_student_versions(tmp_root, name)
        fresh, committed = tmp_root / "notebooks", root / "notebooks"
        fresh_files = {p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file()}
        committed_files = {
            p.relative_to(committed)
            for p in committed.rglob("*")
            if p.is_file() and ".ipynb_checkpoints" not in p.parts
        }
        for rel in sorted(fresh_files - committed_files):
            problems.append(f"notebooks/{rel} is missing (run `make student`).")
        for rel in sorted(committed_files - fresh_files):
            problems.append(f"notebooks/{rel} has no source in solutions/ (remove it, or add its source).")
        for rel in sorted(fresh_files & committed_files):
            if not filecmp.cmp(fresh / rel, committed / rel, shallow=False):
                problems.append(f"notebooks/{rel} differs from what nbgrader generates (run `make student`).")
    return problems


def solution_notebooks(root: Path) -> list[Path]:
    return sorted((root / "solutions").glob("*/*.ipynb"))


def lint(root: Path) -> list[nblint.Problem]:
    """The problems :mod:`tfperf.authoring.nblint` finds in the notebooks of ``solutions/`` (paths relative to ``root``)."""
    problems = nblint.lint(solution_notebooks(root))
    return [nblint.Problem(p.rule, p.path.relative_to(root), p.cell, p.message) for p in problems]


def apply_launch(root: Path) -> list[Path]:
    """Rewrite every solution notebook's launch parts and the README's badges from the configuration."""
    config = launch.load(root)
    titles = {}
    for path in solution_notebooks(root):
        nb = nbformat.read(path, as_version=4)
        notebook = launch.student_path(path, root)
        launch.apply(nb, config, notebook)
        path.write_text(nbformat.writes(normalize(nb)) + "\n", encoding="utf-8")
        titles[notebook] = launch.title(nb)
    readme = root / "README.md"
    readme.write_text(
        launch.update_readme(readme.read_text(encoding="utf-8"), launch.badge_table(config, titles)), encoding="utf-8"
    )
    return release(root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tfperf.authoring", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    norm = sub.add_parser("normalize", help="strip outputs; stable JSON and cell ids")
    norm.add_argument("--check", action="store_true", help="only list notebooks that are not normalized")
    sub.add_parser("release", help="regenerate notebooks/ from solutions/")
    sub.add_parser("check", help="fail unless notebooks/ is in sync with solutions/")
    sub.add_parser("lint", help="check the named rules of tfperf.authoring.nblint on every notebook of solutions/")
    sub.add_parser(
        "launch", help="Colab/Binder links, Colab metadata and setup cells from pyproject.toml, then release"
    )
    args = parser.parse_args(argv)
    root = course_root()
    if args.command == "normalize":
        changed = normalize_all(root, check=args.check)
        for path in changed:
            print(f"{'not normalized' if args.check else 'normalized'}: {path.relative_to(root)}")
        return 1 if (args.check and changed) else 0
    if args.command in ("release", "launch"):
        for path in release(root) if args.command == "release" else apply_launch(root):
            print(f"generated: {path.relative_to(root)}")
        return 0
    if args.command == "lint":
        problems = lint(root)
        for problem in problems:
            print(problem)
        print(f"{len(problems)} problem(s) in {len(solution_notebooks(root))} notebook(s).")
        return 1 if problems else 0
    problems = out_of_sync(root)
    print("\n".join(problems) or "notebooks/ is in sync with solutions/.")
    return 1 if problems else 0
