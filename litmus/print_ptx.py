"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.ptx.printer`."""

from .dialects.ptx.printer import *  # noqa: F401,F403
