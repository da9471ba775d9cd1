"""The model units (one folder each: ``amdgpu/``, ``rc11/``, ``c11/``, ``vulkan/``, ``opencl/``;
see :mod:`oracle.registry`) and the library they share: ``prelude.model`` (definitions several
model files include), :mod:`oracle.models.path_executions` (executions of branching C/Vulkan
programs, for the builders and the tests' Python references) and :func:`with_declared_properties`."""


def with_declared_properties(model: str, build_with):
    """A unit's builder that passes ``build_with`` the properties its model file declares
    (``allow thin-air``: litmus/cfg.py value_domains), read from the model file on first use
    (the model is loaded once and cached by :func:`oracle.lang.load_model`)."""
    allow: list = []

    def build(test):
        if not allow:
            from oracle.lang import load_model
            allow.append(load_model(model).allow)
        return build_with(test, allow=allow[0])

    build.__doc__ = f"The {model} builder, given the model file's declared properties."
    return build
