"""The package layers (DESIGN.md layout, docs/architecture.md): litmus -> oracle / hw -> fuzz, no
import arrow running back. Checked on the source text (every ``import`` statement, including the
ones inside functions), so a lazy import cannot hide a back edge."""

from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: package -> the project packages it may import
ALLOWED = {
    "litmus": {"litmus"},
    "oracle": {"litmus", "oracle"},
    "hw": {"litmus", "hw"},
    "fuzz": {"litmus", "oracle", "hw", "fuzz"},
}


def imported_packages(path: pathlib.Path, package: str) -> set[tuple[int, str]]:
    """(line, top-level project package) of every import in a module of ``package``."""
    here = list(path.relative_to(ROOT).parent.parts)      # the module's package, for from . import
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                names = [".".join(base + ([node.module] if node.module else []))]
            else:
                names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in ALLOWED:
                out.add((node.lineno, top))
    return out


def back_edges(package: str) -> list[str]:
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, top in sorted(imported_packages(path, package)):
            if top not in ALLOWED[package]:
                bad.append(f"{path.relative_to(ROOT)}:{line}: imports {top}")
    return bad


def test_backends_import_only_litmus_and_themselves():
    assert back_edges("hw") == []


def test_oracle_and_litmus_do_not_import_upwards():
    assert back_edges("litmus") == []
    assert back_edges("oracle") == []


def test_the_checker_sees_relative_lazy_and_absolute_imports(tmp_path, monkeypatch):
    # the check itself: a backend module with a lazy oracle import and a relative fuzz import
    pkg = tmp_path / "hw" / "x"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    mod = pkg / "bad.py"
    mod.write_text("import litmus\nfrom ..sim import kernel\n\ndef f():\n    import oracle.check\n"
                   "    from fuzz.compare import compare\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert sorted(imported_packages(mod, "hw")) == [(1, "litmus"), (2, "hw"), (5, "oracle"),
                                                    (6, "fuzz")]
    assert back_edges("hw") == ["hw/x/bad.py:5: imports oracle", "hw/x/bad.py:6: imports fuzz"]
