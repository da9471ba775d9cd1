"""Litmus programs shared by the OpenCL tests (codegen without a device, runs on PoCL)."""

#: store buffering with seq_cst fences: the weak outcome is forbidden; the codegen's
#: ``weaken="sc-fence-as-acq_rel"`` switch makes a device show it
SB_SC_FENCE = """AMDGPU SB+fence.sc
{ x = 0; y = 0; }
 P0@wg 0             | P1@wg 1             ;
 st.atom.agent x, 1  | st.atom.agent y, 1  ;
 fence.sc.agent      | fence.sc.agent      ;
 ld.atom.agent r0, y | ld.atom.agent r0, x ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
"""

#: message passing through LDS and a fenced workgroup barrier (one phase boundary in the kernel)
LDS_BARRIER = """AMDGPU MP+lds+barrier
"P1 must see both stores after the fenced workgroup barrier."
{ lds a = 0; x = 0; }
 P0@wave 0, wg 0 | P1@wave 1, wg 0 ;
 st a, 1         | barrier         ;
 st x, 1         | fence.acq.wg    ;
 fence.rel.wg    | ld r0, a        ;
 barrier         | ld r1, x        ;
forall (P1:r0 == 1 /\\ P1:r1 == 1)
"""
