"""The ``isa`` backend: clang-22's machine code for a gfx target, run on the simulator.

``IsaBackend`` is the simulator backend with a different way of producing the machine: instead of
the hand lowering of :mod:`hw.sim.lower`, the program the simulator runs is the compiled code of
the test (:func:`hw.isa.machine.build`). Randomized and exhaustive runs, histograms and
parameters are the simulator's.
"""

from __future__ import annotations

from litmus import Test, format_test

from ..backend import BackendError, EvidenceBackend
from ..sim.backend import SimBackend
from ..sim.lower import Machine
from ..sim.profiles import PROFILES, with_options
from . import machine as glue
from .mutants import MUTANTS
from .source import IsaRefused
from .targets import Target, parse_spec
from .toolchain import tools_available


class IsaBackend(SimBackend, EvidenceBackend):
    """``isa:TARGET[,OPTIONS][:MUTANT]``."""

    #: a campaign may run :meth:`prepare` in a background thread, overlapping the compile of the
    #: next batch with the run of this one (fuzz/campaign.py ``_batched``)
    prepare_overlaps = True

    def __init__(self, target: Target, mutant: str | None = None):
        profile = with_options(PROFILES[target.profile],
                               (["tgsplit"] if target.tgsplit else []) + [f"mtype={target.mtype}"])
        super().__init__(profile, None)
        self.target = target
        self.isa_mutant = mutant
        self.name = "isa:" + target.label() + (f":{mutant}" if mutant else "")
        self._last: tuple[str, glue.Build] | None = None

    def build(self, test: Test) -> glue.Build:
        """The compiled, interpreted and (with a mutant) edited code of ``test`` (memoized for
        the last test, so a finding's evidence is the code that ran)."""
        if test.dialect not in self.dialects:     # before printing it in its own dialect
            raise IsaRefused(f"the isa backend reads the {'/'.join(self.dialects)} dialect, "
                             f"not {test.dialect}")
        key = format_test(test)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        b = glue.build(test, self.target, self.isa_mutant)
        self._last = (key, b)
        return b

    def machine(self, test: Test) -> Machine:
        try:
            return glue.machine(self.build(test))
        except BackendError as e:
            raise type(e)(f"{test.name}: {e}") from None

    def run(self, test: Test, iterations: int, seed: int = 0):
        h = super().run(test, iterations, seed)
        h.params.update(target=self.target.label(), isa_mutant=self.isa_mutant, mutant=None)
        return h

    def evidence(self, test: Test) -> str:
        """Markdown for a finding: OpenCL source, clang command and version, annotated
        disassembly of every thread (see :mod:`hw.isa.evidence`)."""
        from .evidence import markdown
        return markdown(self.build(test))

    def prepare(self, tests: list[Test], cancel=None) -> None:
        """Compile ``tests`` ahead, in one clang-22 and one llvm-objdump-22 call
        (:func:`hw.isa.toolchain.compile_batch`); those it cannot express are left out (their
        run says why). Safe to call from a background thread; ``cancel`` (a
        ``threading.Event``) stops it early."""
        from .source import generate
        from .toolchain import compile_batch
        srcs = []
        for t in tests:
            try:
                srcs.append(generate(t, self.target).text)
            except Exception:
                continue
        compile_batch(srcs, self.target, cancel)

    def capabilities(self) -> frozenset[str]:
        """What this target can express (:meth:`hw.isa.targets.Target.capabilities`)."""
        return self.target.capabilities()

    def culprit(self, test: Test, reads: list[tuple[int, int]]) -> dict | None:
        """The compiled instruction at fault for a forbidden outcome the oracle blames on
        ``reads`` (see :mod:`hw.isa.culprit`): the finding's bucket signature."""
        from .culprit import culprit
        b = self.build(test)
        glue.machine(b)
        return culprit(b, reads)


def make_backend(spec: str | None) -> IsaBackend:
    why = tools_available()
    if why:
        raise BackendError(f"isa backend: {why}")
    target, mutant = parse_spec(spec, MUTANTS)
    return IsaBackend(target, mutant)
