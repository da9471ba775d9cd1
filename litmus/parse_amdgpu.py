"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.amdgpu.parse`."""

from .dialects.amdgpu.parse import *  # noqa: F401,F403
