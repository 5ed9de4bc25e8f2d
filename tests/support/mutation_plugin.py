"""A pytest plugin for the mutation campaign only (``mutation/run.py`` passes it with
``-p tests.support.mutation_plugin``; never loaded by ``make test`` or CI).

It makes mutmut's figures true for code that runs at import, and cuts the time a kill
takes:

- **Stats run** (``MUTANT_UNDER_TEST=stats``): mutmut records, per test, the functions a
  test executes; calls made while the test modules are *imported* would be credited to
  the first test only (round.py builds its graph from the tableau at import, the card
  and insurance tables are built at import). The plugin takes the functions hit during
  collection, credits them to *every* collected test, and writes their names to
  ``mutation-import-time.json`` (in mutmut's ``mutants/`` directory).
- **Mutant runs**: a mutant of one of those functions changes what the project computes
  at import, so its run drops the project's modules (and the test modules) from
  ``sys.modules`` before collection: they are imported again with the mutant active.
  Other mutants keep the modules the worker server imported once (fast).
  ``MUTATION_FRESH=1`` makes every run import afresh.
- A collection error in a mutant run (the mutant makes an import raise) is not a
  failing test: the run goes on with the tests that could be collected
  (``tests/test_import_time.py`` imports the game core inside its test, so a broken
  import fails a test there); if none of them fails, the run ends with status 2 and the
  plugin records the mutant in ``mutation-import-errors/``: ``run.py`` reports it apart
  (``import error``), not as killed.
- The selected tests run fastest first (their durations from mutmut's stats run), so a
  killed mutant usually costs one fast test, not the property tests; the tests that
  killed mutants of the same function in an earlier run (``MUTATION_KILLERS``) go before
  them, cheapest per kill first. Only the order changes: a mutant is killed when any of
  its tests fails, whichever runs first.
- ``MUTATION_PROFILE=1``: one line per mutant run in ``mutation-profile.jsonl`` (the CPU
  to pytest's configure, to the end of collection, to the end of the tests; the test
  that failed), which ``run.py`` reads for its profile and the killer hints.
- A CPU-time limit per mutant run: twice the selected tests' time in mutmut's stats
  run (measured with its call recording on: more than they need), plus 15 s; when the
  project is imported afresh, the import and collection first get ``IMPORT_BUDGET``
  (20 s) on their own, and the tests' budget counts from the end of the collection
  (``resource.RLIMIT_CPU``; SIGXCPU ends the run and mutmut reports it as a timeout).
  round.py's tests take 90 s in the stats run: a mutant that made its graph endless
  at import cost 195 s of CPU before, 20 s now. mutmut's own wall-clock timer lives in a thread that
  does not survive its fork server's fork, and its CPU limit is (tests + 20 s) x 8: a
  mutant that loops at import cost many minutes of a shared machine. CPU time does not
  grow with the machine's load, so the limit is tight without taking a slow worker for
  a hang.
- ``gc.freeze()`` at the start of a mutant run: the worker inherits the worker server's
  heap, and pytest's collections at session end would walk all of it (half a second a
  mutant; ``run.py`` also turns off pytest's unraisable/thread exception plugins, which
  force those collections).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

_PROJECT = ("shoe_controller", "firmware_bridge", "calibration")
IMPORT_TIME = Path("mutation-import-time.json")
IMPORT_ERRORS = Path("mutation-import-errors")
#: one JSON line per mutant run (``MUTATION_PROFILE=1``): where the worker's CPU went
PROFILE = Path("mutation-profile.jsonl")
_marks: dict[str, float] = {}
_ran: list[str] = []


def _mutant() -> str:
    return os.environ.get("MUTANT_UNDER_TEST", "")


def _is_mutant_run() -> bool:
    return "__mutmut_" in _mutant()


def _drop_project_modules() -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in _PROJECT or name.startswith("tests.test_"):
            del sys.modules[name]


def _killers() -> dict[str, dict[str, int]]:
    """mangled function name -> {test id: mutants of it the test killed}, from the files
    in ``MUTATION_KILLERS`` (``os.pathsep``-separated; written by ``run.py`` from earlier
    runs' profiles): only an order hint, a missing or stale file changes no result."""
    out: dict[str, dict[str, int]] = {}
    for name in filter(None, os.environ.get("MUTATION_KILLERS", "").split(os.pathsep)):
        try:
            hints = json.loads(Path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for function, tests in hints.items():
            out.setdefault(function, {}).update(tests)
    return out


def run_order(nodeids: list[str], durations: dict[str, float],
              kills: dict[str, int]) -> list[str]:
    """The order a mutant's tests run in: those that killed mutants of the same function
    in an earlier run first, cheapest per kill first (duration / kills), then the others
    fastest first; ties keep their collection order.

    >>> run_order(["a", "b", "c", "d"], {"a": 0.5, "b": 0.1, "c": 2.0, "d": 0.3},
    ...           {"c": 10, "d": 1})
    ['c', 'd', 'b', 'a']
    """
    def key(nodeid: str) -> tuple[int, float]:
        took = durations.get(nodeid, 0.0)
        n = kills.get(nodeid.removeprefix("mutants/"), 0)
        return (0, took / n) if n else (1, took)

    return sorted(nodeids, key=key)


def _durations() -> dict[str, float]:
    try:
        return json.loads(Path("mutmut-stats.json").read_text())["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return {}


#: CPU seconds for importing the project and collecting the tests afresh (a second or
#: two without a mutant): a mutant that loops while the tables are built at import is
#: stopped after this, not after the whole tests' budget
IMPORT_BUDGET = 20.0
_test_budget: list[float] = []


def _set_cpu_limit(budget: float) -> None:
    """RLIMIT_CPU's soft limit ``budget`` CPU seconds from now (never above the hard
    limit mutmut's fork server set)."""
    limit = int(time.process_time() + budget) + 1
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY and limit >= hard:
        limit = hard
    resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))


def _limit_cpu(test_ids: list[str], fresh: bool) -> None:
    """Limit this run's CPU time (see the module doc); set before collection, so a
    mutant that loops at import is stopped too: with a fresh import, the collection
    gets IMPORT_BUDGET and the tests their budget from the end of the collection on."""
    durations = _durations()
    if not durations:
        return
    selected = [durations.get(t.removeprefix("mutants/"), 1.0) for t in test_ids
                if "::" in t] or list(durations.values())
    budget = 2 * sum(selected) + 15
    _test_budget.clear()  # not a first phase's
    if fresh:
        _test_budget.append(budget)
        budget = IMPORT_BUDGET
    _set_cpu_limit(budget)


def pytest_configure(config: Any) -> None:
    # the worker was forked for this run: its CPU clock counts from the fork, so this is
    # pytest's own start (arguments, plugins, conftest)
    begin = _marks.get("end", 0.0)
    _marks.clear()
    _marks["begin"] = begin
    _marks["configure"] = time.process_time()
    _ran.clear()
    if not _is_mutant_run():
        if _mutant() == "stats":
            _drop_project_modules()
        return
    gc.freeze()
    config.option.continue_on_collection_errors = True
    config.option.maxfail = 0
    fresh = os.environ.get("MUTATION_FRESH") == "1"
    if not fresh and IMPORT_TIME.exists():
        mangled = _mutant().partition("__mutmut_")[0]
        fresh = mangled in set(json.loads(IMPORT_TIME.read_text(encoding="utf-8")))
    _limit_cpu(config.args, fresh)
    # mutmut names the tests to run (file::test ids); a file that fails to import would
    # make pytest refuse the whole run ("found no collectors", a usage error that mutmut
    # takes for a kill). Collect the files instead, and keep only the named tests.
    wanted = [a for a in config.args if "::" in a]
    _requested.clear()  # not the fork server's collection session's
    if wanted:
        _requested.update(a.removeprefix("mutants/") for a in wanted)
        files = list(dict.fromkeys(a.split("::")[0] for a in config.args))
        config.args[:] = files
    if fresh:
        _drop_project_modules()


_collect_errors: list[str] = []
_requested: set[str] = set()
_failed_tests: list[str] = []


def pytest_collectreport(report: Any) -> None:
    if report.failed and _is_mutant_run():
        _collect_errors.append(str(report.longrepr)[-2000:])


_session: list[Any] = []


def pytest_sessionstart(session: Any) -> None:
    # this session only: mutmut's fork server ran a collection session of its own
    # (forkserver_warmup = "collect") in the process every worker forks from, so a list
    # kept across sessions held that one first, and the stop-at-the-first-failure below
    # went to it: every killed mutant ran all its tests
    _session[:] = [session]
    _collect_errors.clear()
    _failed_tests.clear()


def pytest_collection_finish(session: Any) -> None:
    _marks["collected"] = time.process_time()
    if _test_budget and _is_mutant_run():
        _set_cpu_limit(_test_budget[0])  # imported: now the tests' own budget
    if _collect_errors and _is_mutant_run():
        session.testsfailed = 0  # the tests that could be collected still run


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _ran.append(report.nodeid)
    if report.failed and _is_mutant_run():
        _failed_tests.append(report.nodeid)
        if _session:
            # mutmut's -x, done here (pytest's maxfail would also stop at a collection
            # error, before the tests that could be collected)
            _session[0].shouldfail = "stopping after the first failure"


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if _is_mutant_run() and os.environ.get("MUTATION_PROFILE") == "1":
        _write_profile(exitstatus)
    if _collect_errors and not _failed_tests and _is_mutant_run() and not _first_phase:
        IMPORT_ERRORS.mkdir(exist_ok=True)
        (IMPORT_ERRORS / _mutant()).write_text(_collect_errors[0], encoding="utf-8")
        session.exitstatus = 2


def _write_profile(exitstatus: int) -> None:
    """One line of ``mutation-profile.jsonl`` per pytest session of a mutant (two when
    the killer hints ran first alone): the worker's CPU seconds (counted from its fork)
    when the session began, at pytest's configure, at the end of the collection and at
    the end of the tests; the tests run (the last one failed if any did) and the exit
    status."""
    now = time.process_time()
    line = json.dumps({"mutant": _mutant(), "phase": "first" if _first_phase else "all",
                       "begin": _marks.get("begin", 0.0),
                       "start": _marks.get("configure", 0.0),
                       "collected": _marks.get("collected", now), "end": now,
                       "tests": len(_ran), "failed": bool(_failed_tests),
                       "last": _ran[-1] if _ran else None, "status": int(exitstatus)})
    _marks["end"] = now  # a second phase in this worker begins here
    fd = os.open(PROFILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    if _mutant() == "stats":
        from mutmut.state import state

        hit = set(state()._stats)
        state()._stats.clear()
        ids = [item.nodeid.removeprefix("mutants/") for item in items]
        for function in hit:
            state().tests_by_mangled_function_name[function].update(ids)
        IMPORT_TIME.write_text(json.dumps(sorted(hit), indent=1) + "\n", encoding="utf-8")
        return
    if _is_mutant_run():
        if _requested:
            keep = [i for i in items if i.nodeid.removeprefix("mutants/") in _requested]
            dropped = [i for i in items if i.nodeid.removeprefix("mutants/") not in _requested]
            if dropped:
                config.hook.pytest_deselected(items=dropped)
            items[:] = keep
        kills = _killers().get(_mutant().partition("__mutmut_")[0], {})
        ranked = run_order([item.nodeid for item in items], _durations(), kills)
        by_id = {item.nodeid: item for item in items}
        items[:] = [by_id[nodeid] for nodeid in ranked]


# ------------------------------------------------------------------ killers first, alone

_first_phase: list[bool] = []


def first_tests(tests: list[str], kills: dict[str, int]) -> list[str]:
    """The tests of a mutant's list that killed mutants of its function before (its first
    phase), or none when that is the whole list or no hint applies.

    >>> first_tests(["t::a", "t::b", "t::c"], {"t::b": 3, "t::x": 1})
    ['t::b']
    >>> first_tests(["t::a"], {"t::a": 1}), first_tests(["t::a", "t::b"], {})
    ([], [])
    """
    first = [t for t in tests if kills.get(t.removeprefix("mutants/"))]
    return first if len(first) < len(tests) else []


def _two_phases(run_tests: Any) -> Any:
    """mutmut's ``PytestRunner.run_tests`` in two phases for a mutant with killer hints:
    first a pytest session with only the tests that killed mutants of its function
    before (it collects their files only: most of a killed mutant's cost was pytest
    collecting every file of the module's list); if one of them fails the mutant is
    killed, exactly as the whole list would have found; otherwise the whole list runs as
    without hints. A survivor pays for the first phase twice over, a kill half or less."""
    def wrapped(self: Any, *, mutant_name: str | None, tests: Any) -> int:
        tests = list(tests)
        if mutant_name and "__mutmut_" in mutant_name:
            kills = _killers().get(mutant_name.partition("__mutmut_")[0], {})
            first = first_tests(tests, kills)
            if first:
                _first_phase[:] = [True]
                try:
                    run_tests(self, mutant_name=mutant_name, tests=first)
                except Exception:  # a usage error: the whole list decides
                    pass
                finally:
                    _first_phase.clear()
                if _failed_tests:
                    return 1
        return int(run_tests(self, mutant_name=mutant_name, tests=tests))

    wrapped.two_phases = True  # type: ignore[attr-defined]
    return wrapped


def _install_two_phases() -> None:
    """Wrap mutmut's runner (in the fork server, which imports this plugin when it
    collects the tests before forking the workers); ``MUTATION_TWO_PHASES=0`` turns it
    off."""
    if os.environ.get("MUTATION_TWO_PHASES", "1") != "1" or "mutmut" not in sys.modules:
        return
    try:
        from mutmut.runners.harness import PytestRunner
    except ImportError:
        return
    if not getattr(PytestRunner.run_tests, "two_phases", False):
        PytestRunner.run_tests = _two_phases(PytestRunner.run_tests)  # type: ignore[method-assign]


_install_two_phases()
