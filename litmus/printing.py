"""Text pieces every dialect's printer shares: the condition's proposition (herd's ``/\\``,
``\\/``, ``~`` spelling, which every dialect reads) and the aligned thread table.

Kept apart from the dialect units (litmus/dialects/) so that each printer imports it and no
printer imports another dialect's.
"""

from __future__ import annotations

from .ir import And, Atom, Condition, Const, Not, Or, Prop


def format_prop(prop: Prop, parent: str = "", atom=None) -> str:
    """A proposition as text; ``atom(a)``, when given, may spell an atom its own way (None:
    the usual ``P1:r0 == 1``)."""
    if isinstance(prop, Atom):
        own = atom(prop) if atom is not None else None
        if own is not None:
            return own
        who = prop.name if prop.thread is None else f"P{prop.thread}:{prop.name}"
        return f"{who} {prop.op} {prop.value}"
    if isinstance(prop, Const):
        return "true" if prop.value else "false"
    if isinstance(prop, Not):
        inner = format_prop(prop.arg, "not", atom)
        return f"~{inner}" if isinstance(prop.arg, (Not, Const)) else f"~({inner})"
    if isinstance(prop, And):
        text = " /\\ ".join(format_prop(a, "and", atom) for a in prop.args)
        return f"({text})" if parent in ("and", "or", "not") else text
    if isinstance(prop, Or):
        text = " \\/ ".join(format_prop(a, "or", atom) for a in prop.args)
        return f"({text})" if parent in ("and", "or", "not") else text
    raise TypeError(prop)


def format_condition(cond: Condition) -> str:
    return f"{cond.quantifier} ({format_prop(cond.prop, 'top')})"


def format_table(table: list[list[str]]) -> list[str]:
    """The thread table's rows (cells per row, the placements first) with aligned columns."""
    n = len(table[0])
    widths = [max(len(row[c]) for row in table) for c in range(n)]
    return [" " + " | ".join(row[c].ljust(widths[c]) for c in range(n)) + " ;" for row in table]
