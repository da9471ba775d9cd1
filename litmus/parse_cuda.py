"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.cuda.parse`."""

from .dialects.cuda.parse import *  # noqa: F401,F403
