"""litmus — the program model every part of scopefuzz shares.

Data flow: a file is parsed (:func:`parse_file`, dialect picked from its header) into a
:class:`Test`; the oracle computes its allowed outcomes, a backend runs it, the fuzzer compares.
"""

from .canonical import canonical_form, canonical_hash
from .dialect import Dialect, PrintError
from .dialects import (DEFAULT_MODEL, FRONT_ENDS, dialect_of, format_test, litmus_files, parse,
                       parse_file)
from .dialects.amdgpu.printer import format_instr
from .ir import (UNDEF, And, Atom, Condition, Const, Instr, Location, Not, Or, Test, Thread,
                 is_acquire, is_release)
from .lexer import ParseError
from .outcome import (condition_holds, evaluate, format_outcome, matches, satisfiable, valid,
                      verdict)
from .printing import format_condition, format_prop
from .scopes import SCOPES, Placement, inclusive, instance

__all__ = [
    "UNDEF", "And", "Atom", "Condition", "Const", "Dialect", "Instr", "Location", "Not", "Or",
    "ParseError", "Placement", "PrintError", "SCOPES", "Test", "Thread", "DEFAULT_MODEL",
    "FRONT_ENDS", "canonical_form", "canonical_hash", "condition_holds", "dialect_of",
    "evaluate", "format_condition", "format_instr", "format_outcome", "format_prop",
    "format_test", "inclusive", "instance", "is_acquire", "is_release", "litmus_files",
    "matches", "parse", "parse_file", "satisfiable", "valid", "verdict",
]
