"""OpenCL platforms and devices: listing (``scopefuzz devices``) and picking one by a backend spec.

``opencl`` takes the first device of the first platform; ``opencl:P:D`` picks platform P and
device D, each by index or by a case-insensitive substring of its name.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backend import BackendError


@dataclass(frozen=True)
class DeviceInfo:
    platform_index: int
    device_index: int
    platform: str
    device: str
    version: str
    kind: str
    compute_units: int
    max_wg_size: int


def _cl():
    try:
        import pyopencl as cl
    except Exception as e:  # pragma: no cover - pyopencl is a fixed dependency
        raise BackendError(f"pyopencl unavailable: {e}") from None
    return cl


def _platforms():
    cl = _cl()
    try:
        return cl.get_platforms()
    except cl.Error as e:
        raise BackendError(f"no OpenCL platform: {str(e).splitlines()[0] if str(e) else e}") from None


def _kind(cl, dev) -> str:
    t = dev.type
    for name, bit in (("gpu", cl.device_type.GPU), ("cpu", cl.device_type.CPU),
                      ("accelerator", cl.device_type.ACCELERATOR)):
        if t & bit:
            return name
    return "other"


def list_devices() -> list[DeviceInfo]:
    """Every device of every platform, in platform then device order."""
    cl = _cl()
    out = []
    for pi, p in enumerate(_platforms()):
        try:
            devs = p.get_devices()
        except cl.Error:
            continue
        for di, d in enumerate(devs):
            out.append(DeviceInfo(pi, di, p.name.strip(), d.name.strip(), d.version.strip(),
                                  _kind(cl, d), d.max_compute_units, d.max_work_group_size))
    return out


def _pick(items, key: str, what: str, names):
    if key.isdigit():
        i = int(key)
        if i >= len(items):
            raise BackendError(f"no OpenCL {what} {i} (there are {len(items)})")
        return i
    hits = [i for i, n in enumerate(names) if key.lower() in n.lower()]
    if not hits:
        raise BackendError(f"no OpenCL {what} matches {key!r} (have: {', '.join(names) or 'none'})")
    return hits[0]


def device_keys(spec: str | None) -> tuple[str, str]:
    """(platform key, device key) of a spec ``None``, ``P`` or ``P:D`` (an index or a name
    substring each; ``0`` when left out), read without opening OpenCL."""
    if not spec:
        return "0", "0"
    parts = spec.split(":")
    if len(parts) > 2 or not all(parts):
        raise BackendError(f"bad OpenCL device spec {spec!r}: expected PLATFORM:DEVICE")
    return parts[0], (parts[1] if len(parts) == 2 else "0")


def select(spec: str | None):
    """(platform, device, platform_index, device_index) for a spec ``None`` or ``P:D``."""
    plats = _platforms()
    if not plats:
        raise BackendError("no OpenCL platform found (install an ICD such as pocl-opencl-icd)")
    cl = _cl()
    pkey, dkey = device_keys(spec)
    pi = _pick(plats, pkey, "platform", [p.name for p in plats])
    try:
        devs = plats[pi].get_devices()
    except cl.Error:
        devs = []
    if not devs:
        raise BackendError(f"OpenCL platform {plats[pi].name!r} has no device")
    di = _pick(devs, dkey, "device", [d.name for d in devs])
    return plats[pi], devs[di], pi, di
