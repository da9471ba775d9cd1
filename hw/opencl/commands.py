"""``scopefuzz codegen`` (print a test's kernel) and ``scopefuzz devices`` (list OpenCL devices)."""

from __future__ import annotations

import sys

from litmus import ParseError, parse_file
from litmus.dialect import find as find_dialect

from ..backend import BackendError
from .codegen import KERNEL_LANGUAGES, CodegenError, barrier_problem, generate, languages_for


def cmd_codegen(args) -> int:
    if args.compile is not None:           # a real compiler's PTX, read back (hw/ptxc)
        from ..ptxc.commands import cmd_codegen_ptxc
        return cmd_codegen_ptxc(args.file, args.compile, args.ptx_mutant)
    if args.ptx_mutant is not None:
        print("scopefuzz codegen: --ptx-mutant needs --compile", file=sys.stderr)
        return 2
    if len(args.file) != 1:
        print("scopefuzz codegen: one FILE (several only with --compile)", file=sys.stderr)
        return 2
    args.file = args.file[0]
    language = args.dialect               # the kernel language (cl3, amdgcn, ptx, isa)
    if language == "isa":
        from ..isa.commands import cmd_codegen_isa
        return cmd_codegen_isa(args.file, args.target, args.full)
    try:
        test = parse_file(args.file)
    except ParseError as e:
        print(str(e), file=sys.stderr)
        return 2
    record = find_dialect(test.dialect)
    if record is not None and record.mapped_to:   # shown as the program a compiler could emit
        shown = languages_for(record.mapped_to)
        if language is not None and language not in shown:
            print(f"{args.file}: a {record.name} test is shown as its {record.mapped_to} program: "
                  f"--dialect {'/'.join(shown)}", file=sys.stderr)
            return 2
        try:
            sys.stdout.write(record.map(test))
        except ValueError as e:
            print(f"{args.file}: {e}", file=sys.stderr)
            return 2
        return 0
    try:
        kernel = generate(test, language or (languages_for(test.dialect) or ("cl3",))[0])
    except CodegenError as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 2
    problem = barrier_problem(test)
    if problem:
        print(f"{args.file}: warning: the runner refuses this test: {problem}", file=sys.stderr)
    sys.stdout.write(kernel.source)
    return 0


def cmd_devices(args) -> int:
    from .devices import list_devices
    try:
        devs = list_devices()
    except BackendError as e:
        print(f"scopefuzz devices: {e}", file=sys.stderr)
        return 1
    if not devs:
        print("no OpenCL devices found (install an ICD such as pocl-opencl-icd)")
        return 1
    for d in devs:
        print(f"opencl:{d.platform_index}:{d.device_index}  {d.device}  [{d.kind}, "
              f"{d.compute_units} CU, max workgroup {d.max_wg_size}]  {d.version}  "
              f"({d.platform})")
    return 0


def register(sub) -> None:
    p = sub.add_parser("codegen", help="print the OpenCL kernel of a litmus test",
                       description="Print the complete parallel-testing kernel of FILE in a "
                                   "dialect: cl3 (OpenCL C 3.0) or amdgcn (OpenCL C with AMDGPU "
                                   "clang builtins) for AMDGPU tests, ptx (OpenCL C 1.2 with "
                                   "inline PTX, NVIDIA GPUs) for PTX tests; the default is ptx "
                                   "for PTX tests, cl3 otherwise; or, with --dialect isa, the "
                                   "code clang-22 compiles for a gfx target next to the "
                                   "simulator's hand lowering; a TILEIR test is shown as the PTX "
                                   "litmus program a compiler could emit for it (ptx, its "
                                   "default). With --compile, per FILE: the source kernel a "
                                   "real compiler was given, its PTX and the PTX read back as "
                                   "a PTX litmus test with each row's PTX and source line "
                                   "(docs/compilers.md). Exit 2 on bad input.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--compile", metavar="COMPILER[:sm_XX,Oo]", default=None,
                      help="compile the C/OPENCL/CUDA test with a real compiler (clang-cuda, "
                           "clang-ocl, nvcc-libcu, nvcc-builtins; e.g. clang-cuda:sm_90,O2) and "
                           "print source, PTX and read-back litmus")
    p.add_argument("--ptx-mutant", metavar="NAME", default=None,
                   help="with --compile: plant a compiler bug by editing the PTX "
                        "(hw/ptxc/mutants.py) before it is read back")
    mode.add_argument("--dialect", "-d", choices=KERNEL_LANGUAGES + ("isa",), default=None,
                   help="isa: clang-22's machine code for --target next to the simulator's hand "
                        "lowering, with every difference (docs/isa.md)")
    p.add_argument("--target", default=None, metavar="TARGET[,OPTIONS]",
                   help="gfx target of --dialect isa (gfx90a gfx942 gfx950 gfx1100 gfx1200 "
                        "gfx1250; default gfx942)")
    p.add_argument("--full", action="store_true",
                   help="--dialect isa: also the annotated disassembly of every thread")
    p.add_argument("file", metavar="FILE", nargs="+")
    p.set_defaults(func=cmd_codegen)
    p = sub.add_parser("devices", help="list OpenCL devices (backend names opencl:P:D)",
                       description="List every OpenCL device with the backend name that picks it.")
    p.set_defaults(func=cmd_devices)
