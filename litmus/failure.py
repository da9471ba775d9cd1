"""One line and an exit status for a failure no front end or engine reported itself.

The command-line contract (docs/cli-contract.md) is that every input gives exit 0/1 or a one-line
error; a command wraps each file's work in :func:`failure_line` so that running out of memory or
stack is reported as unusable input (exit 2) against that file, and any other unexpected exception
as an internal error (exit :data:`INTERNAL_ERROR`) naming the file, never as a traceback and never
with the status reserved for findings (1).
"""

from __future__ import annotations

#: exit status of an unexpected exception (a bug in scopefuzz, not in the input)
INTERNAL_ERROR = 5

#: exit status of unusable input
BAD_INPUT = 2


def failure_line(where: str, e: BaseException) -> tuple[str, int]:
    """``(line, status)`` for an exception ``e`` raised while handling ``where`` (a file path, or
    ``scopefuzz CMD`` when no file is at hand)."""
    if isinstance(e, MemoryError):
        return (f"{where}: out of memory: the test is too large to handle within the memory "
                "available", BAD_INPUT)
    if isinstance(e, RecursionError):
        return f"{where}: the test nests too deeply to handle (recursion limit)", BAD_INPUT
    text = " ".join(str(e).split())
    if len(text) > 300:
        text = text[:300] + "..."
    return (f"{where}: internal error: {type(e).__name__}: {text} (a bug in scopefuzz; please "
            "report it with this file)", INTERNAL_ERROR)
