"""Dependencies inside the library run one way: the order listed in tfperf/__init__.py."""

import ast
import re
from pathlib import Path

import tfperf

SRC = Path(tfperf.__file__).parent


def layer_order() -> list[str]:
    return re.findall(r"^- ``(\w+)``", tfperf.__doc__, flags=re.M)


def internal_imports(path: Path) -> set[str]:
    """Top-level tfperf modules imported by a file (``from tfperf import x`` / ``from tfperf.x import``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tfperf":
            parts = node.module.split(".")
            if len(parts) > 1:
                found.add(parts[1])
            else:
                found |= {alias.name for alias in node.names}
    return found


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
