"""The mutation campaign's own tool (mutation/run.py, tests/support/mutation_plugin.py):
its module table names files that exist, the reviewed equivalents file is well formed,
and the figures and order hints are computed as docs/testing.md says. The campaign
itself is not run here (it takes tens of minutes)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from tests.support.mutation_plugin import first_tests, run_order

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("mutation_run", ROOT / "mutation" / "run.py")
assert _spec is not None and _spec.loader is not None
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)

#: mutmut 3's names: module path, then x_function or xǁClassǁmethod, then __mutmut_N
NAME = re.compile(r"^[a-z_]+(\.[a-z_0-9]+)+\.(x_|xǁ[A-Za-z_0-9]+ǁ)[A-Za-z_0-9]+__mutmut_\d+$")


def test_every_module_of_the_campaign_exists_and_has_tests() -> None:
    # a test file listed before it lands is skipped (run.py prints it), but every module
    # and every deselected test must be there, and each module must keep a test file
    for name, (target, tests) in run.MODULES.items():
        assert (ROOT / target).is_file(), name
        present = [t for t in tests if (ROOT / t).is_file()]
        assert present, f"{name}: none of its test files exists"
        assert run.missing_tests(name) == [t for t in tests if t not in present]
    for d in run.DESELECT + [d for ds in run.MODULE_DESELECT.values() for d in ds]:
        assert (ROOT / d.split("::")[0]).is_file(), d
    assert set(run.MODULE_DESELECT) <= set(run.MODULES)


def test_every_listed_equivalent_names_a_mutant_of_a_campaign_module_once_with_a_reason(
) -> None:
    targets = {t.removesuffix(".py").replace("/", ".") for t, _ in run.MODULES.values()}
    seen: set[str] = set()
    for line in (ROOT / "mutation" / "equivalent.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        assert NAME.match(name), name
        assert name.split(".x")[0] in targets, name
        assert len(reason.strip()) >= 10, f"{name}: no reason"
        assert name not in seen, f"{name} listed twice"
        seen.add(name)
    assert seen == set(run.load_equivalent())


def test_an_equivalent_without_a_reason_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "equivalent.txt"
    f.write_text("# a comment\nm.x_f__mutmut_1 a reason\nm.x_f__mutmut_2\n", encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        run.load_equivalent(f)
    assert str(info.value) == f"{f}: m.x_f__mutmut_2: no reason given"


def test_the_score_is_killed_over_mutants_less_listed_equivalents() -> None:
    a = {"mutants": 20, "killed": 17, "timeouts": 2, "survived": 3, "equivalent": 2,
         "other": {}, "seconds": 5.0, "cpu_seconds": 8.0, "unchecked": 0}
    b = {"mutants": 5, "killed": 3, "timeouts": 0, "survived": 1, "equivalent": 0,
         "other": {"m.x_g__mutmut_1": "no tests"}, "seconds": 3.0, "cpu_seconds": 4.0,
         "unchecked": 7}
    t = run.totals([a, b])
    assert (t["mutants"], t["killed"], t["equivalent"], t["unchecked"]) == (25, 20, 2, 7)
    assert t["score"] == pytest.approx(20 / 23)
    assert t["cpu_seconds"] == 12.0


def test_killers_are_counted_per_function_from_the_failed_runs_only(tmp_path: Path) -> None:
    lines = [{"mutant": "p.m.x_f__mutmut_1", "failed": True, "last": "t.py::a"},
             {"mutant": "p.m.x_f__mutmut_7", "failed": True, "last": "t.py::a"},
             {"mutant": "p.m.x_f__mutmut_8", "failed": True, "last": "t.py::b"},
             {"mutant": "p.m.xǁCǁg__mutmut_2", "failed": True, "last": "t.py::a"},
             {"mutant": "p.m.x_f__mutmut_9", "failed": False, "last": "t.py::c"},
             {"mutant": "p.m.x_h__mutmut_1", "failed": False, "last": None}]
    f = tmp_path / "mutation-profile.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert run.killers_of(f) == {"p.m.x_f": {"t.py::a": 2, "t.py::b": 1},
                                 "p.m.xǁCǁg": {"t.py::a": 1}}
    assert run.killers_of(tmp_path / "absent.jsonl") == {}


def test_killer_tests_run_first_cheapest_per_kill_then_the_rest_fastest_first() -> None:
    durations = {"t::slow": 3.0, "t::fast": 0.01, "t::mid": 0.5, "t::killer": 2.0,
                 "t::rare": 0.4}
    kills = {"t::killer": 20, "t::rare": 1}  # 0.1 s a kill, then 0.4 s a kill
    order = run_order(["t::slow", "t::fast", "t::mid", "t::killer", "t::rare", "t::new"],
                      durations, kills)
    assert order == ["t::killer", "t::rare", "t::new", "t::fast", "t::mid", "t::slow"]
    # no hints: fastest first, as before the hints existed
    assert run_order(["t::slow", "t::fast", "t::mid"], durations, {}) == [
        "t::fast", "t::mid", "t::slow"]


def test_the_first_phase_is_the_hinted_killers_only_and_never_the_whole_list() -> None:
    tests = ["tests/t.py::a", "tests/t.py::b", "tests/u.py::c"]
    # hints are test ids as pytest reports them; mutmut may name tests with mutants/
    assert first_tests(tests, {"tests/u.py::c": 2, "tests/v.py::gone": 5}) == ["tests/u.py::c"]
    assert first_tests(["mutants/tests/t.py::a", "tests/t.py::b"],
                       {"tests/t.py::a": 1}) == ["mutants/tests/t.py::a"]
    # every test hinted (the first phase would be the whole run), or none: one phase
    assert first_tests(tests, {t: 1 for t in tests}) == []
    assert first_tests(tests, {}) == []
