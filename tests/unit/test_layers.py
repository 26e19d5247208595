"""Dependencies inside the library run one way.

Between subpackages: the order listed in ``tfperf/__init__.py``. Inside a subpackage: the order
listed in its own ``__init__.py``. Those docstrings are the library's one map.
"""

import ast
import importlib
import re
from pathlib import Path

import tfperf

SRC = Path(tfperf.__file__).parent


def listed(docstring: str) -> list[str]:
    return re.findall(r"^- ``(\w+)``", docstring, flags=re.M)


def layer_order() -> list[str]:
    return listed(tfperf.__doc__)


def subpackages() -> list[str]:
    return [name for name in layer_order() if (SRC / name / "__init__.py").exists()]


def internal_imports(path: Path, package: tuple[str, ...] | None = None) -> set[tuple[str, ...]]:
    """tfperf modules a file imports, in any form, as name parts below tfperf (``("grading", "guard")``):
    ``from tfperf import x``, ``from tfperf.x import y``, ``import tfperf.x``, and relative imports."""
    package = package or path.parent.relative_to(SRC.parent).parts  # ("tfperf",) or ("tfperf", "grading")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            modules = [module + [alias.name] for alias in node.names]
        else:
            continue
        found |= {tuple(parts[1:3]) for parts in modules if parts[0] == "tfperf" and len(parts) > 1}
    return found


def test_every_form_of_import_is_seen(tmp_path):
    probe = tmp_path / "probe.py"  # as if it were tfperf/grading/probe.py
    probe.write_text(
        "import tfperf.measure.timing\nimport tfperf.runtime.device as d\nfrom tfperf.runtime import logs\n"
        "from tfperf.runtime.sizes import pick\nfrom . import speed\nfrom .. import lesson\n"
        "from ..measure.monitor import Monitor\nimport numpy\n"
    )
    found = internal_imports(probe, ("tfperf", "grading"))
    assert found == {
        ("measure", "timing"),
        ("runtime", "device"),
        ("runtime", "logs"),
        ("runtime", "sizes"),
        ("grading", "speed"),
        ("lesson",),
        ("measure", "monitor"),
    }


def test_contributing_guide_points_to_the_one_map():
    guide = (SRC.parent.parent / "docs" / "contributing.md").read_text()
    assert "src/tfperf/__init__.py" in guide
    listed_there = set(re.findall(r"^- `(\w+)`: ", guide, flags=re.M))
    modules = {m for package in subpackages() for m in listed(importlib.import_module(f"tfperf.{package}").__doc__)}
    assert not listed_there & modules, "contributing.md keeps a second list of the modules"


def test_every_module_and_subpackage_is_listed():
    present = {p.stem for p in SRC.glob("*.py") if not p.stem.startswith("_")} | {
        p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }
    assert present == set(layer_order()), f"unlisted: {present - set(layer_order())}"
    for package in subpackages():
        inside = {p.stem for p in (SRC / package).glob("*.py") if not p.stem.startswith("_")}
        names = set(listed(importlib.import_module(f"tfperf.{package}").__doc__))
        assert inside == names, f"tfperf.{package}: unlisted {inside - names}; listed but missing {names - inside}"


def test_subpackages_import_only_lower_layers():
    order = layer_order()
    for name in order:
        files = [SRC / f"{name}.py"] if (SRC / f"{name}.py").exists() else sorted((SRC / name).glob("*.py"))
        for path in files:
            for imported in internal_imports(path):
                if imported[0] != name:
                    assert order.index(imported[0]) < order.index(name), f"{path.relative_to(SRC)} imports {imported}"


def test_modules_import_only_lower_modules_of_their_subpackage():
    for package in subpackages():
        order = listed(importlib.import_module(f"tfperf.{package}").__doc__)
        for path in sorted((SRC / package).glob("*.py")):
            if path.stem.startswith("_"):
                continue
            for imported in internal_imports(path):
                if imported[1:] == (path.stem,):  # itself, by name (a module run as __main__ serving as itself)
                    continue
                if imported[0] == package and len(imported) > 1 and imported[1] in order:
                    assert order.index(imported[1]) < order.index(path.stem), (
                        f"tfperf.{package}.{path.stem} imports tfperf.{package}.{imported[1]}, listed after it"
                    )
