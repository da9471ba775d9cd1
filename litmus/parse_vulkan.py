"""Compatibility name (issue 34): the code moved to :mod:`litmus.dialects.vulkan.parse`."""

from .dialects.vulkan.parse import *  # noqa: F401,F403
