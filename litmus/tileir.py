"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.tileir.ops`."""

from .dialects.tileir.ops import *  # noqa: F401,F403
