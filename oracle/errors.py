"""The oracle's one error type: a one-line message (bad model file, program too big, ...)."""


class OracleError(Exception):
    """Raised for anything the oracle cannot decide: the message is one line, ready to print."""


class TooManyEvents(OracleError):
    """The program needs more events than the engine's bit-matrix rows hold (64)."""


class BudgetExhausted(OracleError):
    """The search ran past its step budget (``budget`` of :func:`oracle.check` and the outcome
    queries): a safety net of campaigns, counted apart from the other oracle errors."""


class MemoryCeiling(OracleError):
    """Going on would take the process past its memory ceiling (:mod:`oracle.ceiling`,
    ``--max-memory``): the test is an error (exit 2 from the CLI), never an out-of-memory kill."""
