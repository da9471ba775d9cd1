"""Program families, one per dialect: what a campaign draws, registered by dialect name.

A *program family* (:class:`ProgramFamily`) is everything a campaign needs to know about the
programs of one dialect: the deterministic draw of program *i* of a seed, the feature names and
their parser, how a backend's declared capabilities narrow the features, the small program run
before a campaign's clock starts, and -- for the source dialects of the compilers campaign --
how a program is printed and made smaller. Each family lives in ``fuzz/programs/<dialect>.py``
as a module-level ``FAMILY`` and is listed once in :data:`FAMILIES`; campaigns pick theirs with
:func:`family` (by dialect) or :func:`for_model` (the dialect a model reads), never by testing
dialect strings.

Adding a family: write ``fuzz/programs/<name>.py`` defining ``FAMILY = ProgramFamily(...)`` and
add one line ``"<DIALECT>": "fuzz.programs.<name>"`` to :data:`FAMILIES`. A family whose
``loop`` is ``"backend"`` becomes drawable by ``scopefuzz fuzz --backend B --model M`` for every
model M that reads its dialect.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable


class FamilyError(Exception):
    """No program family fits (an unknown dialect, a model no campaign draws programs for)."""


@dataclass(frozen=True)
class ProgramFamily:
    """The programs of one dialect, as the campaigns draw them.

    ``draw(seed, index, features, near_miss)`` is program ``index`` of campaign ``seed``: a pure
    function of its arguments (resume and shards rely on it). ``loop`` names the campaign that
    runs the family: ``"backend"`` (``fuzz --backend``: litmus tests run on hardware or the
    simulator), ``"weakening"`` (``fuzz --against``: a model against a model) or ``"compile"``
    (``fuzz --compile``: source programs compiled by a real compiler)."""

    dialect: str
    loop: str
    draw: Callable[..., Any]
    #: the feature names a campaign may select (``--features``) and their parser (text -> set)
    features: tuple[str, ...] = ()
    parse_features: Callable[[Any], frozenset] = lambda text: frozenset()
    #: (features, a backend's capabilities() or None) -> the features it can express; None: the
    #: features are used as given
    narrow: Callable[[frozenset, Any], frozenset] | None = None
    #: () -> the litmus text of the program a campaign runs before its clock starts (None: none)
    warm_up: Callable[[], str] | None = None
    #: source families (loop "compile"): the program's text in its dialect, and the candidates
    #: one reduction step smaller (minimization)
    render: Callable[[Any], str] | None = None
    smaller: Callable[[Any], Any] | None = None
    #: where a campaign of another loop that meets this dialect's model is pointed to
    hint: str | None = None

    def narrowed(self, features: frozenset, backends: Callable[[], Any]) -> frozenset:
        """``features`` narrowed to what every backend of ``backends()`` (None entries skipped)
        declares it can express (``capabilities()``); ``backends`` is called only for a family
        that narrows (opening a backend can fail)."""
        if self.narrow is None:
            return features
        for b in backends():
            caps = getattr(b, "capabilities", None)
            if caps is not None:
                features = self.narrow(features, caps())
        return features


#: dialect -> the module defining its ``FAMILY`` (imported when first asked for, so a campaign
#: loads only the generator it draws from); the order is the order :func:`for_model` prefers
FAMILIES: dict[str, str] = {
    "AMDGPU": "fuzz.programs.amdgpu",
    "PTX": "fuzz.programs.ptx",
    "TILEIR": "fuzz.programs.tileir",
    "CUDA": "fuzz.programs.cuda",
    "C": "fuzz.programs.c",
    "OPENCL": "fuzz.programs.opencl",
}

#: the family of a campaign that names no model
DEFAULT_DIALECT = "AMDGPU"


def family(dialect: str) -> ProgramFamily:
    """The registered family of ``dialect`` (FamilyError when none is)."""
    try:
        module = FAMILIES[dialect]
    except KeyError:
        raise FamilyError(f"no program family draws {dialect} programs (fuzz/programs/)") from None
    return importlib.import_module(module).FAMILY


def dialects(loop: str | None = None) -> list[str]:
    """The registered dialects (those run by campaign ``loop`` when given), in registry order."""
    return [d for d in FAMILIES if loop is None or family(d).loop == loop]


def for_model(model: str | None, loop: str = "backend") -> ProgramFamily:
    """The family a campaign of ``loop`` draws for ``--model``: the first registered family of
    that loop whose dialect the model reads (:data:`DEFAULT_DIALECT` without a model);
    FamilyError naming the model and what it reads otherwise."""
    if model is None:
        return family(DEFAULT_DIALECT)
    try:
        import oracle.registry
        reads = oracle.registry.get(model).dialects
    except Exception as e:
        raise FamilyError(str(e)) from None
    fits = [d for d in dialects(loop) if d in reads]
    if fits:
        return family(fits[0])
    hints = [family(d).hint for d in FAMILIES if d in reads and family(d).loop != loop
             and family(d).hint]
    hint = f" ({'; '.join(hints)})" if hints else ""
    raise FamilyError(f"model {model} reads {'/'.join(reads)} tests; the fuzzer draws "
                      f"{' and '.join(dialects(loop))} programs{hint}")
