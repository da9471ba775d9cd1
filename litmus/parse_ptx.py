"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.ptx.parse`."""

from .dialects.ptx.parse import *  # noqa: F401,F403
