"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.c.parse`."""

from .dialects.c.parse import *  # noqa: F401,F403
