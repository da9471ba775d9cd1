"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.tileir.printer`."""

from .dialects.tileir.printer import *  # noqa: F401,F403
