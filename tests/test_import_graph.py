"""The import graph of ``dogood`` (grimp): no cycles, and shifts that depend on nothing but ``dogood.shifts.base``
among the shifts and on no build, recipe, eval or publishing module. ``pyproject.toml``'s import-linter contracts
say the same; the last two tests run them."""

from __future__ import annotations

from pathlib import Path

import pytest

# grimp reads the import graph; import-linter (the test extra) brings it
grimp = pytest.importorskip("grimp", reason="grimp (import-linter's graph): the test extra")

ROOT = Path(__file__).resolve().parents[1]
#: Modules a shift must not import (nor anything inside them).
NOT_FOR_SHIFTS = ("dogood.models", "dogood.pipeline", "dogood.eval", "dogood.share", "dogood.augment", "dogood.cli")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("dogood", cache_dir=None)


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module, sorted: a module's is the modules it imports
    (directly or not) that also import it."""
    cycles = set()
    for module in graph.modules:
        loop = graph.find_upstream_modules(module) & graph.find_downstream_modules(module)
        if loop:
            cycles.add(tuple(sorted(loop | {module})))
    return [list(c) for c in sorted(cycles)]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _line(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    details = graph.get_import_details(importer=importer, imported=imported)
    where = ", ".join(f"l.{d['line_number']}" for d in details)
    return f"{importer} -> {imported}" + (f" ({where})" if where else "")


def test_import_cycles_are_found():
    g = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c", "p.d"):
        g.add_module(module)
    g.add_import(importer="p.a", imported="p.b")
    g.add_import(importer="p.b", imported="p.a")
    g.add_import(importer="p.c", imported="p.a")
    g.add_import(importer="p.c", imported="p.d")
    assert import_cycles(g) == [["p.a", "p.b"]]


def test_no_import_cycle(graph):
    cycles = import_cycles(graph)
    assert not cycles, "modules that import each other (directly or round a cycle): " + "; ".join(
        " <-> ".join(c) for c in cycles)


def test_the_graph_covers_the_package(graph):
    expected = {"dogood.pipeline.build", "dogood.pipeline.worker", "dogood.shifts.base", "dogood.models.base"}
    assert expected <= graph.modules


def shift_modules() -> dict[str, str]:
    """Each module that defines a shift dogood ships, with the shift's recipe key."""
    from dogood.shifts import SHIFTS

    return {cls.__module__: name for name, cls in SHIFTS.items() if cls.__module__.startswith("dogood.shifts.")}


def test_every_shift_is_one_hop_from_its_recipe_key():
    """``dogood/shifts/<family>/<recipe key>.py`` holds the shift, and nothing else holds one."""
    from dogood.shifts import SHIFTS

    for name, cls in SHIFTS.items():
        if not cls.__module__.startswith("dogood."):
            continue  # a shift a test registers
        assert cls.__module__ == f"dogood.shifts.{cls.family}.{name}", (name, cls.__module__)
        path = ROOT / "dogood" / "shifts" / cls.family / f"{name}.py"
        assert path.is_file(), path
    assert len(shift_modules()) == len([c for c in SHIFTS.values() if c.__module__.startswith("dogood.")])


def test_shifts_import_no_other_shift_and_no_build_or_eval_module(graph):
    shifts = shift_modules()
    wrong = []
    for module in sorted(shifts):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported in shifts or imported == "dogood.shifts" or any(_inside(imported, n) for n in NOT_FOR_SHIFTS):
                wrong.append(_line(graph, module, imported))
    assert not wrong, "shift modules import other shifts or build/eval modules:\n" + "\n".join(wrong)


def _lint_imports(*contracts: str) -> int:
    pytest.importorskip("importlinter", reason="the contracts are run by import-linter (the test extra)")
    from importlinter.cli import lint_imports

    return lint_imports(config_filename=str(ROOT / "pyproject.toml"), limit_to_contracts=contracts, no_cache=True,
                        no_logo=True)


def test_import_linter_contracts_acyclic_layers_and_shifts_outside():
    assert _lint_imports("acyclic", "layers", "shifts-outside") == 0


def test_import_shifts_loads_neither_datasets_nor_torch():
    """``import dogood.shifts`` (every shift registered) stays light: no HF ``datasets``, ``transformers`` or torch."""
    import subprocess
    import sys

    code = ("import sys, dogood.shifts; heavy = [m for m in ('datasets', 'torch', 'transformers') if m in sys.modules];"
            " print(len(dogood.shifts.SHIFTS), heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) >= 28 and out[1].strip() == "[]", out


def test_import_linter_contract_shifts_apart():
    assert _lint_imports("shifts-apart") == 0
