"""How the real Tile IR toolchain lowers each (ordering, scope) pair (docs/tileir.md).

Needs the optional extra ``pip install 'scopefuzz[tileir]'`` (cuda-tile, nvidia-cuda-tileiras,
nvidia-cuda-nvdisasm); no GPU: kernels are compiled ahead of time. For every memory ordering and
scope cuTile Python accepts on an atomic (``ct.atomic_add``; its ``ct.load``/``ct.store`` take
no ordering), it exports the kernel as Tile IR bytecode and as an sm_90 cubin (tileiras), then
prints the Tile IR op (``tileirdisasm``) and the SASS memory instructions (``nvdisasm``)::

    python benchmarks/tileir_toolchain.py [--gpu sm_90] [--out DIR]
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import subprocess
import sys
import tempfile

ORDERS = ("RELAXED", "ACQUIRE", "RELEASE", "ACQ_REL")
SCOPES = ("BLOCK", "DEVICE", "SYS")
SASS = re.compile(r"\b(ATOMG?|MEMBAR|FENCE|ERRBAR|CCTL)[A-Z0-9._]*")


def _kernel(ct, order: str, scope: str):
    mo, ms = getattr(ct.MemoryOrder, order), getattr(ct.MemoryScope, scope)

    @ct.kernel
    def k(x):
        ct.atomic_add(x, ct.arange(4, dtype=ct.int32), 1, memory_order=mo, memory_scope=ms)
    return k


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="sm_90")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    try:
        import cuda.tile as ct
        from cuda.tile._cext import CallingConvention
        from cuda.tile.compilation import ArrayConstraint, KernelSignature, export_kernel
        import nvidia.cu13
    except ImportError as e:
        print(f"tileir_toolchain: needs the optional extra scopefuzz[tileir] ({e})", file=sys.stderr)
        return 2
    bindir = os.path.join(list(nvidia.cu13.__path__)[0], "bin")
    out = args.out or tempfile.mkdtemp(prefix="tileir-toolchain-")
    sig = KernelSignature([ArrayConstraint(ct.int32, 1, index_dtype=ct.int32,
                                           stride_lower_bound_incl=0, alias_groups=(),
                                           may_alias_internally=False)],
                          CallingConvention.cutile_python_v2())
    print(f"| cuTile ordering, scope | Tile IR op (tileirdisasm) | SASS {args.gpu} (nvdisasm) |")
    print("|---|---|---|")
    for order, scope in itertools.product(ORDERS, SCOPES):
        base = os.path.join(out, f"add_{order}_{scope}")
        k = _kernel(ct, order, scope)
        export_kernel(k, [sig], base + ".tilebc", output_format="tileir_bytecode")
        export_kernel(k, [sig], base + ".cubin", gpu_code=args.gpu, output_format="cubin")
        tir = subprocess.run([os.path.join(bindir, "tileirdisasm"), base + ".tilebc"],
                             capture_output=True, text=True).stdout
        op = re.search(r"atomic_rmw_tko \w+ \w+", tir)
        sass = subprocess.run([os.path.join(bindir, "nvdisasm"), base + ".cubin"],
                              capture_output=True, text=True).stdout
        ins = sorted({m.group(0) for m in SASS.finditer(sass)})
        print(f"| {order}, {scope} | `{op.group(0) if op else '?'}` | {' '.join(ins)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
