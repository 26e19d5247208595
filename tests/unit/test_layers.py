"""Dependencies inside the library run one way: the order listed in tfperf/__init__.py."""

import ast
import re
from pathlib import Path

import tfperf

SRC = Path(tfperf.__file__).parent


def layer_order() -> list[str]:
    return re.findall(r"^- ``(\w+)``", tfperf.__doc__, flags=re.M)


def internal_imports(path: Path, package: tuple[str, ...] | None = None) -> set[str]:
    """Top-level tfperf modules a file imports, in any form: ``from tfperf import x``,
    ``from tfperf.x import y``, ``import tfperf.x``, and relative ``from . import x`` / ``from .x import y``."""
    package = package or path.parent.relative_to(SRC.parent).parts  # ("tfperf",) or ("tfperf", "grading")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            modules = [module] if len(module) > 1 else [module + [alias.name] for alias in node.names]
        else:
            continue
        found |= {parts[1] for parts in modules if parts[0] == "tfperf" and len(parts) > 1}
    return found


def test_every_form_of_import_is_seen(tmp_path):
    probe = tmp_path / "probe.py"  # as if it were tfperf/grading/probe.py
    probe.write_text("import tfperf.timing\nimport tfperf.device as d\nfrom tfperf import logs\n"
                     "from tfperf.sizes import pick\nfrom . import speed\nfrom .. import plots\n"
                     "from ..monitor import Monitor\nimport numpy\n")
    found = internal_imports(probe, ("tfperf", "grading"))
    assert found == {"timing", "device", "logs", "sizes", "grading", "plots", "monitor"}


def test_contributing_guide_points_to_the_one_list():
    guide = (SRC.parent.parent / "docs" / "contributing.md").read_text()
    assert "src/tfperf/__init__.py" in guide
    listed_there = re.findall(r"^- `(\w+)`: ", guide, flags=re.M)
    assert not set(listed_there) & set(layer_order()), "contributing.md keeps a second list of the layers"


def test_every_module_is_listed():
    listed = set(layer_order())
    present = {p.stem for p in SRC.glob("*.py") if not p.stem.startswith("_")} | {
        p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert present == listed, f"unlisted: {present - listed}; listed but missing: {listed - present}"


def test_modules_import_only_lower_layers():
    order = layer_order()
    for name in order:
        files = [SRC / f"{name}.py"] if (SRC / f"{name}.py").exists() else sorted((SRC / name).glob("*.py"))
        for path in files:
            for imported in internal_imports(path) - {name}:
                assert order.index(imported) < order.index(name), f"{path.name} ({name}) imports {imported}"
