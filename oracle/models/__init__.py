"""The model units (one folder each: ``amdgpu/``, ``rc11/``, ``vulkan/``; see
:mod:`oracle.registry`) and the library they share: ``prelude.model`` (definitions several model
files include) and :mod:`oracle.models.path_executions` (executions of branching C/Vulkan
programs, for the builders and Python fallbacks of rc11 and vulkan)."""
