"""fuzz.workitems: the plan of a distributed fuzz campaign, the controller's store, the fleet summary."""

import json

import pytest

from fuzz import workitems as wi


def test_plan_splits_the_campaign_into_slices_of_bounded_length():
    p = wi.make_plan("c", "sim", 7, total=60, workers=3, items=None)
    assert (p.items, p.seconds) == (12, 15.0)           # 4 per worker; 12 x 15 s = 3 workers x 60 s
    p = wi.make_plan("c", "sim", 7, total=86400, workers=128, items=None)
    assert (p.items, p.seconds) == (18432, 600.0)       # no slice longer than 10 minutes
    assert wi.make_plan("c", "sim", 0, total=5, workers=1, items=None,
                        distributed=False).items == 1
    assert wi.make_plan("c", "sim", 0, total=5, workers=1, items=None).items == 4   # one host
    p = wi.make_plan(None, "opencl:0:1", 3, total=10, workers=2, items=5)
    assert p.name.startswith("opencl_0_1-seed3-") and (p.items, p.seconds) == (5, 4.0)
    with pytest.raises(wi.PlanError, match="use letters"):
        wi.make_plan("a/b", "sim", 0, 1, 1, None)
    with pytest.raises(wi.PlanError, match="at least 1"):
        wi.make_plan("a", "sim", 0, 1, 1, 0)


def test_item_names_and_indices():
    p = wi.make_plan("c", "sim", 0, total=3, workers=2, items=8)
    assert p.item_name(3) == "litmus-fuzz[0.75s-3of8]"
    assert wi.item_index("::" + p.item_name(3)) == 3
    assert wi.item_index("litmus-fuzz[5s]") == 1
    assert wi.item_index("tests/x.litmus::MP") is None


def test_store_keeps_each_item_once_and_resume_checks_the_plan(tmp_path):
    store = str(tmp_path / "c")
    plan = wi.make_plan("c", "sim", 1, total=4, workers=2, items=4)
    assert wi.open_store(store, plan, resume=False) == plan
    assert wi.keep(store, 2, {"programs": 5}) and not wi.keep(store, 2, {"programs": 9})
    (tmp_path / "c" / "items" / "item-3.json").write_text('{"torn')      # a torn file: not an item
    assert wi.received(store) == {2: {"programs": 5}}
    with pytest.raises(wi.PlanError, match="already holds campaign 'c'"):
        wi.open_store(store, plan, resume=False)
    other = wi.make_plan("c", "sim", 2, total=4, workers=3, items=None)
    with pytest.raises(wi.PlanError, match="seed=2, but the campaign was started with seed=1"):
        wi.open_store(store, other, resume=True)
    # resumed with other workers: the stored item count and slice stand
    again = wi.open_store(store, wi.make_plan("c", "sim", 1, 4, 5, None), resume=True)
    assert (again.items, again.seconds) == (4, 2.0)
    with pytest.raises(wi.PlanError, match="no campaign to resume"):
        wi.open_store(str(tmp_path / "none"), plan, resume=True)


def test_fleet_summary_per_host_and_worker_and_the_incomplete_line():
    plan = wi.make_plan("c", "sim", 0, total=10, workers=2, items=4)
    f1 = {"id": "f1"}
    results = {1: {"host": "a", "worker": "gw0", "programs": 100, "seconds": 5.0, "findings": [f1]},
               2: {"host": "a", "worker": "gw0", "programs": 50, "seconds": 5.0, "findings": [f1]},
               3: {"host": "b", "worker": "gw1", "programs": 30, "seconds": 2.0, "findings": []}}
    f = wi.fleet_summary(plan, results, {4: "worker gw1 on b went down while running it"}, "CMD")
    assert f["received"] == 3 and not f["complete"] and f["programs"] == 180
    assert f["hosts"]["a"] == {"items": 2, "programs": 150, "seconds": 10.0, "findings": 1,
                               "rate": 15.0}
    assert f["workers"]["b/gw1"]["rate"] == 15.0
    assert f["lost"] == [{"item": 4, "reason": "worker gw1 on b went down while running it"}]
    assert wi.incomplete_line(f) == ("INCOMPLETE: 1 of 4 work items missing (1 lost, 0 never "
                                     "run); continue it with: CMD")
    md = "\n".join(wi.fleet_markdown(f))
    assert "| a | 2 | 150 | 10 | 15 | 1 |" in md and "- item 4: lost: worker gw1" in md
    never = wi.fleet_summary(plan, results, {}, "CMD")
    assert never["not_run"] == [4] and "0 lost, 1 never run" in wi.incomplete_line(never)
    done = wi.fleet_summary(plan, {**results, 4: results[3]}, {}, "CMD")
    assert done["complete"] and wi.incomplete_line(done) is None and done["resume"] is None
    json.dumps(f)                                  # fleet.json is plain JSON
