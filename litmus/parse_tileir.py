"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.tileir.parse`."""

from .dialects.tileir.parse import *  # noqa: F401,F403
