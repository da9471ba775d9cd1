"""The function-local imports of project modules (issue 34: imports at the top of files where
nothing forces otherwise), each with the reason it stays inside its function.

    python scripts/lazy_imports.py [--movable]

A reason is one of:

- ``entry``: the module is an entry point kept light on purpose (``fuzz.cli``, every
  ``*.commands``, the pytest plugin, a package's ``__init__``): ``scopefuzz check`` and every
  pytest run import them, so what a subcommand needs is loaded when it runs (issue 32's start-up);
- ``guarded``: the import sits under ``try``/``if``/``with`` (an optional tool, a fallback);
- ``startup``: ``tests/test_startup.py`` keeps the target out of ``scopefuzz check``'s imports
  (:data:`STARTUP`: rc11's builder loads the Python path enumeration only when it builds paths);
- ``cycle``: importing the target (in a fresh interpreter) already imports this module: at the
  top it would meet a half-initialised module (a package ``__init__`` on the way);
- ``heavy:X``: importing the target loads ``X`` (numba, numpy, pyopencl, hypothesis, pytest)
  where importing this module does not: a light module (``check``'s parse, a report, a
  campaign's directory reader) would pay numba's import (about 0.6 s) for one function;
- ``movable``: none of these: it could be at the top.

Each module is imported in a fresh interpreter (``sys.modules`` compared), so this takes about a
minute. Judged one import at a time: moving several at once can make a light module heavy through
another's move; ``--movable`` prints the movable ones for a maintainer to move and re-run.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("litmus", "oracle", "hw", "fuzz")
HEAVY = ("numba", "numpy", "pyopencl", "hypothesis", "pytest")
#: (module, target) pairs kept lazy for ``check``'s start-up, which tests/test_startup.py asserts
STARTUP = {("oracle.models.rc11.builder", "oracle.models.path_executions")}


def module_name(path: pathlib.Path) -> str:
    rel = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def is_entry(mod: str, path: pathlib.Path) -> bool:
    return (mod.endswith(".commands") or mod in ("fuzz.cli", "fuzz.pytest_plugin")
            or path.name == "__init__.py")


def local_imports(path: pathlib.Path):
    """(line, target module, guarded, statement) of every project import inside a function of
    ``path``; the statement is the import written absolute (what :func:`loaded_by` runs)."""
    mod = module_name(path)
    here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
            statements = [f"import {t}" for t in targets]
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            targets = [".".join(base + ([node.module] if node.module else []))]
            statements = [f"from {targets[0]} import "
                          + ", ".join(a.name for a in node.names)]
        else:
            continue
        pairs = [(t, st) for t, st in zip(targets, statements) if t.split(".")[0] in PACKAGES]
        q, fn, guarded = parents.get(node), None, False
        while q is not None:
            if fn is None and isinstance(q, (ast.Try, ast.If, ast.With)):
                guarded = True
            if fn is None and isinstance(q, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fn = q
            q = parents.get(q)
        if fn is not None:
            for t, st in pairs:
                yield node.lineno, t, guarded, st


_LOADED: dict[str, set | None] = {}


def loaded_by(statement: str) -> set | None:
    """The modules an import ``statement`` leaves in ``sys.modules`` of a fresh interpreter
    (None: it fails). ``from oracle import check`` is run as written: a package that loads its
    names on first use (``oracle``) loads more for a name than for itself."""
    mod = statement
    if mod not in _LOADED:
        code = ("import json, sys\ntry:\n    " + statement + "\nexcept Exception:\n"
                "    print('null'); raise SystemExit\nprint(json.dumps(sorted(sys.modules)))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd="/", env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout
        last = out.strip().splitlines()[-1:] or ["null"]
        _LOADED[mod] = None if last[0] == "null" else set(json.loads(last[0]))
    return _LOADED[mod]


def reason(mod: str, path: pathlib.Path, statement: str, guarded: bool) -> str:
    if is_entry(mod, path):
        return "entry"
    if guarded:
        return "guarded"
    if (mod, statement.split()[1]) in STARTUP:
        return "startup"
    here, there = loaded_by(f"import {mod}"), loaded_by(statement)
    if here is None or there is None:
        return "unimportable"
    if mod in there:
        return "cycle"
    heavy = [h for h in HEAVY if h in there and h not in here]
    return f"heavy:{heavy[0]}" if heavy else "movable"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--movable", action="store_true", help="list the movable imports")
    args = ap.parse_args(argv)
    counts: collections.Counter = collections.Counter()
    movable = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            mod = module_name(path)
            for line, target, guarded, statement in local_imports(path):
                why = reason(mod, path, statement, guarded)
                counts[why] += 1
                if why == "movable":
                    movable.append(f"{path.relative_to(ROOT)}:{line}: {target}")
    print(f"{sum(counts.values())} function-local imports of project modules: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if args.movable:
        print("\n".join(movable))
    return 0


if __name__ == "__main__":
    sys.exit(main())
