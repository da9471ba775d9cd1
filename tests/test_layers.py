"""The package layers (DESIGN.md layout, docs/architecture.md): litmus -> oracle / hw -> fuzz, no
import arrow running back. Checked on the source text (every ``import`` statement, including the
ones inside functions), so a lazy import cannot hide a back edge."""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

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


# --- inside a package: no import circle, no private name of another package (issue 34) ---------

def module_name(path: pathlib.Path) -> str:
    """``litmus/dialects/c/parse.py`` -> ``litmus.dialects.c.parse`` (a package's ``__init__``
    is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: pathlib.Path, modules: set[str]) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of every import in ``path`` (lazy ones included), resolved to the
    project module it loads: ``from .x import y`` is module ``pkg.x.y`` when that is a module,
    else ``pkg.x`` with name ``y``. A parent package's ``__init__``, which Python runs before
    any submodule, is not counted as imported (every package would be a circle)."""
    name = module_name(path)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.append((node.lineno, sub, None) if sub in modules else
                           (node.lineno, mod, a.name))
    return out


def package_graph(package: str) -> dict[str, set[str]]:
    """module -> the modules of ``package`` it imports (anywhere in its text)."""
    paths = {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}
    return {m: {t for _, t, _ in imports_of(p, set(paths)) if t in paths and t != m}
            for m, p in paths.items()}


def circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The import circles: strongly connected components of more than one module (Tarjan's
    algorithm, iterative), each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(tuple(sorted(comp)))
    return sorted(out)


def private_imports(package: str) -> list[str]:
    """``path:line: module._name`` for every private name (``_x``, not dunder) imported from a
    module of another package: a package's internals are its own (issue 34). Packages are the
    folders (``oracle.models.ptx`` is not ``oracle``); a submodule of one's own folder is fine."""
    paths = {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}
    top = {m.split(".")[0] for m in ALLOWED}
    bad = []
    for m, p in paths.items():
        home = m if p.name == "__init__.py" else m.rpartition(".")[0]
        for line, mod, name in imports_of(p, set(paths)):
            if name is None or mod.split(".")[0] not in top:
                continue
            if name.startswith("_") and not name.startswith("__"):
                owner = mod if (ROOT / mod.replace(".", "/")).is_dir() else mod.rpartition(".")[0]
                if owner != home:
                    bad.append(f"{p.relative_to(ROOT)}:{line}: {mod}.{name}")
    return bad


#: Circles and private imports allowed: none (issue 34 removed the last ones: the oracle's
#: check / explanation / ubflags / warmup, hw.opencl's codegen / emit_ptx, fuzz's gather /
#: pytest_plugin, oracle.engine._bit and path_executions._build); they must stay empty.
CIRCLES_ALLOWED: set[tuple[str, ...]] = set()
PRIVATE_ALLOWED: set[str] = set()


def _without_line(entry: str) -> str:
    path, _, rest = entry.split(":", 2)
    return f"{path}:{rest}"


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_new_import_circle_inside_a_package(package):
    found = set(circles(package_graph(package)))
    mine = {c for c in CIRCLES_ALLOWED if c[0].split(".")[0] == package}
    assert sorted(found - mine) == [], "an import circle (break it; see docs/architecture.md)"
    assert sorted(mine - found) == [], "an allowed circle is gone: delete it from CIRCLES_ALLOWED"


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_private_name_imported_from_another_package(package):
    found = {_without_line(e) for e in private_imports(package)}
    mine = {e for e in PRIVATE_ALLOWED if e.startswith(package + "/")}
    assert sorted(found - mine) == [], "a private name of another package (make it public)"
    assert sorted(mine - found) == [], "an allowed import is gone: delete it from PRIVATE_ALLOWED"


def test_litmus_has_no_circle_and_no_allowance():
    assert circles(package_graph("litmus")) == []
    assert not any(c[0].startswith("litmus") for c in CIRCLES_ALLOWED)
    assert not any(e.startswith("litmus/") for e in PRIVATE_ALLOWED)


def test_the_circle_and_private_checks_see_lazy_relative_imports(tmp_path, monkeypatch):
    # a package with a circle a -> b -> (lazy) a, and a private name of another package
    pkg = tmp_path / "hw"
    (pkg / "sub").mkdir(parents=True)
    for f in ("__init__.py", "sub/__init__.py", "c.py"):
        (pkg / f).write_text("")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("def f():\n    from hw import a\n")
    (pkg / "sub" / "d.py").write_text("from ..c import _hidden\nfrom .e import _mine\n")
    (pkg / "sub" / "e.py").write_text("from hw.c import public\nfrom . import d\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert circles(package_graph("hw")) == [("hw.a", "hw.b"), ("hw.sub.d", "hw.sub.e")]
    assert private_imports("hw") == ["hw/sub/d.py:1: hw.c._hidden"]


def test_the_layer_test_fails_on_a_new_circle_or_private_import(tmp_path, monkeypatch):
    """The gate itself (not only the checker): on a tree with a circle, and on one with a
    private name imported from another package, the layer tests above fail; on the clean tree
    they pass."""
    pkg = tmp_path / "hw"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    return 1\n")
    (pkg / "b.py").write_text("from .a import f\n")
    (tmp_path / "litmus").mkdir()
    (tmp_path / "litmus" / "__init__.py").write_text("")
    (tmp_path / "litmus" / "ir.py").write_text("_private = 1\npublic = 2\n")
    me = sys.modules[__name__]
    monkeypatch.setattr(me, "ROOT", tmp_path)
    monkeypatch.setattr(me, "CIRCLES_ALLOWED", set())
    monkeypatch.setattr(me, "PRIVATE_ALLOWED", set())
    test_no_new_import_circle_inside_a_package("hw")             # clean: both pass
    test_no_private_name_imported_from_another_package("hw")
    (pkg / "a.py").write_text("def f():\n    from . import b\n    return b\n")   # a lazy circle
    with pytest.raises(AssertionError, match="an import circle"):
        test_no_new_import_circle_inside_a_package("hw")
    (pkg / "a.py").write_text("def f():\n    return 1\n")
    (pkg / "b.py").write_text("from litmus.ir import public, _private\n")
    with pytest.raises(AssertionError, match="a private name of another package"):
        test_no_private_name_imported_from_another_package("hw")


# --- no test of a dialect's NAME outside the dialect units (issue 34) ----------------------------

def _dialect_words() -> set[str]:
    from litmus.dialect import registered
    return {w for d in registered() for w in d.words + d.aliases}


def _names_a_dialect(node: ast.AST) -> bool:
    """``dialect``, ``test.dialect``, ``self.kernel_dialect`` ...: an expression that holds a
    dialect by its name."""
    name = node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else ""
    return name.lower().endswith("dialect")


def _strings(node: ast.AST) -> list[str]:
    """The string constants of a constant or of a literal tuple/list/set."""
    elts = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def dialect_name_tests(path: pathlib.Path, words: set[str]) -> list[str]:
    """``path:line: expression`` for every ``==``/``!=``/``in``/``not in`` between a dialect
    header word (or a literal collection holding one) and either a dialect-holding expression or
    anything at all when the word is an unmistakable one (upper case, longer than one letter:
    ``'PTX' in unit.dialects``, ``kind[0] == 'AMDGPU'``). Comparing a kernel language such as
    ``'ptx'`` with ``self.kernel_language`` is not a dialect test."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left] + node.comparators
        for op, a, b in zip(node.ops, sides, sides[1:]):
            if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                continue
            for held, lit in ((a, b), (b, a)):
                found = [w for w in _strings(lit) if w in words]
                if found and (_names_a_dialect(held)
                              or any(w.isupper() and len(w) > 1 for w in found)):
                    out.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}: "
                               f"{ast.unparse(node)}")
                    break
            else:
                continue
            break
    return out


def dialect_tests_outside_units() -> list[str]:
    """Every dialect name test in the packages and benchmarks, outside ``litmus/dialects/``
    (the units, whose job is their dialect) and tests/."""
    words = _dialect_words()
    out = []
    for top in ("litmus", "oracle", "hw", "fuzz", "benchmarks"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if not path.relative_to(ROOT).as_posix().startswith("litmus/dialects/"):
                out += dialect_name_tests(path, words)
    return out


#: dialect name tests still in fuzz/ (issue 34: the campaign's generator choice and the pytest
#: plugin go over to the dialect records and ``Backend.dialects``); may only shrink
DIALECT_TESTS_ALLOWED: set[str] = set()          # issue 34: none left; may only stay empty


def test_no_dialect_name_test_outside_the_dialect_units():
    """Code outside litmus/dialects/ asks the dialect's record (litmus.dialect.get), a model
    unit's or a backend's declared ``dialects``, or an emitter's ``READS`` -- never compares a
    dialect with a header word (docs/architecture.md, "Adding a dialect")."""
    found = {_without_line(e) for e in dialect_tests_outside_units()}
    assert sorted(found - DIALECT_TESTS_ALLOWED) == [], \
        "a dialect name test: ask the Dialect record or the declared dialects instead"
    assert sorted(DIALECT_TESTS_ALLOWED - found) == [], \
        "an allowed dialect test is gone: delete it from DIALECT_TESTS_ALLOWED"


def test_the_dialect_test_check_sees_each_form(tmp_path, monkeypatch):
    mod = tmp_path / "hw" / "m.py"
    mod.parent.mkdir()
    mod.write_text("if test.dialect == 'AMDGPU': pass\n"
                   "if dialect not in ('C', 'OPENCL'): pass\n"
                   "ok = 'PTX' in unit.dialects\n"
                   "lang = self.kernel_language == 'ptx'\n"         # a kernel language: fine
                   "other = test.dialect in unit.dialects\n"        # declared data: fine
                   "x = kind[0] != \"TILEIR\"\n"
                   "y = name == 'C'\n")                             # one letter, not a dialect
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert dialect_name_tests(mod, {"AMDGPU", "C", "OPENCL", "PTX", "ptx", "TILEIR"}) == [
        "hw/m.py:1: test.dialect == 'AMDGPU'",
        "hw/m.py:2: dialect not in ('C', 'OPENCL')",
        "hw/m.py:3: 'PTX' in unit.dialects",
        "hw/m.py:6: kind[0] != 'TILEIR'"]
