"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.opencl.parse`."""

from .dialects.opencl.parse import *  # noqa: F401,F403
