"""Compatibility names (issue 34): :func:`format_test` is :func:`litmus.dialects.format_test`
(every dialect's printer, chosen by its record); the AMDGPU dialect's pieces moved to
:mod:`litmus.dialects.amdgpu.printer` and the shared ones to :mod:`litmus.printing`."""

from .dialect import PrintError
from .dialects import format_test
from .dialects.amdgpu.printer import format_amdgpu, format_instr, format_placement
from .printing import format_condition, format_prop, format_table

__all__ = ["PrintError", "format_amdgpu", "format_condition", "format_instr", "format_placement",
           "format_prop", "format_table", "format_test"]
