"""Programs above the engine's 64 events: the reference model decides (rc11, vulkan), amdgpu refuses."""

import csv

import pytest

import litmus
import oracle


def expected(conformance, suite):
    with open(conformance / "expected" / f"{suite}.csv") as f:
        return {row[0]: row[1] for row in csv.reader(f) if len(row) == 2}


def test_vulkan_programs_above_64_events_get_verdicts_from_the_reference(conformance):
    want = expected(conformance, "VULKAN")
    want_dr = expected(conformance, "VULKAN-DR")
    big = sorted((conformance / "VULKAN").rglob("xf-barrier*.litmus"))
    assert big
    for path in big:
        rel = path.relative_to(conformance).as_posix()
        r = oracle.check(litmus.parse_file(path), "vulkan")
        assert "reference-partial" in r.flags
        assert r.verdict == {"1": "Ok", "0": "No"}[want[rel]], rel
        if rel in want_dr:
            assert ("racy" not in r.flags) == (want_dr[rel] == "1"), rel


def test_amdgpu_program_above_64_events_is_a_one_line_error():
    rows = " ;\n".join(" | ".join(["st.atom x, 1"] * 4) for _ in range(17))
    text = f"AMDGPU big\n{{ x = 0; }}\n P0 | P1 | P2 | P3 ;\n{rows} ;\nexists (x == 1)\n"
    with pytest.raises(oracle.OracleError) as e:
        oracle.check(litmus.parse(text))
    assert "more than 64 events" in str(e.value) and "\n" not in str(e.value)
