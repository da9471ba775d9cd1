"""The model units (one folder each: ``amdgpu/``, ``rc11/``, ``vulkan/``; see
:mod:`oracle.registry`) and the library they share: ``prelude.model`` (definitions several model
files include) and :mod:`oracle.models.path_executions` (the events of branching C/Vulkan
programs, for the rc11 and vulkan builders and the tests' Python references)."""
