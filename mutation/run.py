"""The mutation campaign (``make mutation``): mutmut over the modules that decide money,
cards, buttons and integrity, one module at a time, each against its own tests.

For each target module the script copies the working tree into
``build/mutation/<name>/`` (so a run never touches the checkout), writes the
``[tool.mutmut]`` section for that module there, runs ``mutmut run`` under ``nice``, and
reads ``mutmut results --all true``. It prints one line per module::

    module                       mutants  killed  survived  equivalent  other  score  time

``score = killed / (mutants - listed equivalent)``; ``other`` counts timeouts and
suspicious results (counted as not killed unless they are timeouts, which mutmut reports
as killed by a hang: see docs/testing.md). Survivors that are listed in
``mutation/equivalent.txt`` (one ``mutant-name  reason`` per line) are equivalent; any other
survivor is printed, so a new one is seen at once.

Usage::

    python mutation/run.py                 # every module
    python mutation/run.py settlement shoe # some of them
    python mutation/run.py --list          # the modules and their tests

Not part of ``make test`` or CI: a full campaign takes about 20 minutes on two idle cores.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "mutation"
EQUIVALENT = ROOT / "mutation" / "equivalent.txt"
#: which tests killed which function's mutants: the committed hints (``--save-killers``)
#: and those of the runs in this checkout (newer, so they win): the plugin runs those
#: tests first; an order hint only, no result depends on it
KILLERS = ROOT / "mutation" / "killers.json"
BUILD_KILLERS = BUILD / "killers.json"
_killers_lock = threading.Lock()

GAME_TESTS = ["tests/test_game_shoe.py", "tests/test_shoe_supervisor_paths.py",
              "tests/test_shoe_state_reference.py", "tests/test_shoe_events_exact.py",
              "tests/test_game_supervisor.py",
              "tests/test_reference_money.py", "tests/test_whole_shoe.py"]

#: name -> (file to mutate, the tests that run against it)
MODULES: dict[str, tuple[str, list[str]]] = {
    "cards": ("shoe_controller/game/cards.py",
              ["tests/test_import_time.py", "tests/test_reference_cards.py",
               "tests/test_game_tableau.py", "tests/test_replay.py", *GAME_TESTS]),
    "tableau": ("shoe_controller/game/tableau.py",
                ["tests/test_import_time.py", "tests/test_reference_tableau.py",
                 "tests/test_game_tableau.py", "tests/test_reference_money.py",
                 "tests/test_whole_shoe.py"]),
    # round.py's functions build its tables at import; the tables are checked against
    # the reference by these (the shoe's tests add nothing but minutes per mutant)
    "round": ("shoe_controller/game/round.py",
              ["tests/test_import_time.py", "tests/test_reference_tableau.py",
               "tests/test_game_tableau.py"]),
    "rules": ("shoe_controller/game/rules.py",
              ["tests/test_game_settlement.py", "tests/test_config.py", *GAME_TESTS]),
    "settlement": ("shoe_controller/game/settlement.py",
                   ["tests/test_game_settlement.py", "tests/test_reference_money.py",
                    "tests/test_whole_shoe.py"]),
    "insurance": ("shoe_controller/game/insurance.py",
                  ["tests/test_import_time.py", "tests/test_reference_insurance.py",
                   "tests/test_game_insurance.py"]),
    "inventory": ("shoe_controller/game/inventory.py",
                  ["tests/test_import_time.py", "tests/test_reference_cards.py", *GAME_TESTS]),
    "shoe": ("shoe_controller/game/shoe.py",
             ["tests/test_game_insurance.py", "tests/test_game_properties.py", *GAME_TESTS]),
    "events": ("shoe_controller/game/events.py",
               ["tests/test_events_codec.py", "tests/test_game_properties.py",
                "tests/test_replay.py", "tests/test_publish_schemas.py", *GAME_TESTS]),
    "inputs": ("shoe_controller/game/inputs.py", ["tests/test_inputs_checks.py", *GAME_TESTS]),
    "supervisor": ("shoe_controller/game/supervisor.py",
                   ["tests/test_supervisor_refusal.py", "tests/test_game_supervisor.py",
                    "tests/test_shoe_supervisor_paths.py",
                    *GAME_TESTS]),
    "describe": ("shoe_controller/game/describe.py",
                 ["tests/test_replay.py", "tests/test_replay_streaming.py"]),
    "display_state": ("shoe_controller/game/display_state.py",
                      ["tests/test_display_state.py", "tests/test_publish_display_encoding.py",
                       "tests/test_publish_schemas.py", "tests/test_display_state_reference.py"]),
    "edge_sorting": ("shoe_controller/game/edge_sorting.py", ["tests/test_edge_sorting.py"]),
    "insurance_odds": ("shoe_controller/game/insurance_odds.py",
                       ["tests/test_game_insurance_odds.py",
                        "tests/test_insurance_odds_reference.py",
                        "tests/test_insurance_odds_mutants.py"]),
    "odds": ("shoe_controller/game/odds.py", ["tests/test_odds.py", "tests/test_protection.py",
                                              "tests/test_odds_reference.py",
                                              "tests/test_odds_mutants.py"]),
    "protection": ("shoe_controller/game/protection.py",
                   ["tests/test_protection.py", "tests/test_integrity_shuffle_weak.py",
                    "tests/test_protection_replay.py", "tests/test_protection_reference.py",
                    "tests/test_protection_mutants.py", "tests/test_shuffle_tray.py"]),
    "replay_text": ("shoe_controller/game/replay_text.py",
                    ["tests/test_replay.py", "tests/test_replay_streaming.py",
                     "tests/test_game_shoe.py", "tests/test_replay_text_reference.py"]),
    "roads": ("shoe_controller/game/roads.py",
              ["tests/test_roads.py", "tests/test_display_state.py",
               "tests/test_roads_reference.py"]),
    "shoe_link": ("shoe_controller/game/shoe_link.py", ["tests/test_bridge_protocol11.py"]),
    "shuffle_integrity": ("shoe_controller/game/shuffle_integrity.py",
                          ["tests/test_integrity.py", "tests/test_protection.py",
                           "tests/test_shuffle_integrity_reference.py",
                           "tests/test_shuffle_integrity_mutants.py"]),
    "shuffle_tracking": ("shoe_controller/game/shuffle_tracking.py",
                         ["tests/test_integrity_shuffle_weak.py", "tests/test_protection.py",
                          "tests/test_shuffle_tracking_reference.py",
                          "tests/test_shuffle_tracking_mutants.py", "tests/test_shuffle_tray.py",
                          "tests/test_shuffle_strip.py"]),
    "shuffle_fit": ("shoe_controller/game/shuffle_fit.py", ["tests/test_shuffle_fit.py"]),
    "shuffle_pairs": ("shoe_controller/game/shuffle_pairs.py", ["tests/test_shuffle_pairs.py"]),
    "framing": ("firmware_bridge/framing.py",
                ["tests/test_reference_framing.py", "tests/test_bridge_codec.py"]),
    "protocol": ("firmware_bridge/protocol.py",
                 ["tests/test_bridge_codec.py", "tests/test_protocol_doc.py"]),
    "journal": ("shoe_controller/journal.py",
                ["tests/test_journal.py", "tests/test_reference_journal.py",
                 "tests/test_journal_documented.py", "tests/test_journal_hostile.py",
                 "tests/test_wal_bound.py", "tests/test_feed.py",
                 "tests/test_journal_cleanup.py"]),
    "passes": ("shoe_controller/vision/passes.py",
               ["tests/test_passes.py", "tests/test_reference_passes.py"]),
}

#: tests left out of every module's run: too slow to rerun per mutant, and covered by a
#: faster test against the same independent reference (the 10^6 six-value sequences take
#: 200 s under mutmut's stats; test_reference_tableau.py checks every five-card start
#: against tests/support/baccarat_ref.py in 20 s)
DESELECT = ["tests/test_game_tableau.py::test_every_six_value_sequence_agrees_with_reference"]

#: tests left out of one module's run only. shuffle_tracking: the 150 fair shoes of
#: test_fair_shoes_stay_below_villes_bound took 36.5 s of the module's 60 s of tests, 60%
#: of every survivor's cost (about 7,200 CPU s for the module). Without it a mutant only
#: that statistical test would kill is reported as a SURVIVOR (never as killed): such
#: mutants are killed by exact tests (tests/test_shuffle_tracking_mutants*.py) against an
#: independent reference. The statistical test still runs in CI.
MODULE_DESELECT: dict[str, list[str]] = {
    "shuffle_tracking": [
        "tests/test_integrity_shuffle_weak.py::test_fair_shoes_stay_below_villes_bound"],
}

#: environment of the test runs: the property tests' examples are cut down (each mutant
#: runs them again) and derandomised, so a result is reproducible
MUTATION_ENV = {"HYPOTHESIS_PROFILE": "mutation", "WHOLE_SHOE_EXAMPLES": "30",
                "SHOE_PROPERTY_EXAMPLES": "60"}

_RESULT = re.compile(r"^\s*(\S+__mutmut_\d+):\s*(.+?)\s*$")


#: the order a whole campaign starts the modules in: the longest first (CPU seconds of a
#: module's run in the campaign of main 3c16682, docs/testing.md; protection,
#: shuffle_integrity: its rate there times its mutants; protection, odds, insurance_odds:
#: the campaign of 01dc0ec; shuffle_tracking: 1,738 CPU s in session 6 without the 150
#: fair shoes, fewer survivors since; journal: guessed, its 116 listed equivalents no
#: longer run), so the modules finishing
#: last are short; ``--cheapest-first`` reverses it (most modules done in a short window)
COST_HINT = {"protection": 1700, "insurance_odds": 1100, "shuffle_tracking": 1000,
             "journal": 900, "odds": 840, "shoe": 600, "shuffle_integrity": 560,
             "round": 420, "roads": 250,
             "display_state": 160, "replay_text": 155,
             "passes": 110, "describe": 100, "settlement": 81, "framing": 80,
             "protocol": 66, "cards": 53, "events": 39, "edge_sorting": 33,
             "insurance": 33, "tableau": 33, "inventory": 32, "inputs": 30,
             "rules": 26, "supervisor": 26, "shoe_link": 15}


class LoadWatch:
    """The machine's load while a campaign runs: the 1-minute load average sampled every
    10 s, and the CPU the whole machine used (``/proc/stat``), so a wall time can be read
    against what else ran."""

    def __init__(self, every: float = 10.0) -> None:
        self._samples: list[float] = []
        self._stop = threading.Event()
        self._t0, self._busy0 = time.monotonic(), self._busy()
        self._thread = threading.Thread(target=self._watch, args=(every,), daemon=True)
        self._thread.start()

    @staticmethod
    def _busy() -> float | None:
        try:
            fields = Path("/proc/stat").read_text().split("\n")[0].split()[1:]
        except OSError:
            return None
        ticks = [int(x) for x in fields]
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
        return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def _watch(self, every: float) -> None:
        while True:
            self._samples.append(os.getloadavg()[0])
            if self._stop.wait(every):
                return

    def stop(self) -> str:
        """A line: load average min / median / max, and the machine's CPU seconds."""
        self._stop.set()
        self._thread.join()
        wall = time.monotonic() - self._t0
        busy = self._busy()
        xs = sorted(self._samples) or [0.0]
        machine = ""
        if busy is not None and self._busy0 is not None:
            machine = (f"; the whole machine used {busy - self._busy0:.0f} CPU s of "
                       f"{wall * (os.cpu_count() or 1):.0f} in that time")
        return (f"load average during the run: min {xs[0]:.1f}, median "
                f"{xs[len(xs) // 2]:.1f}, max {xs[-1]:.1f} over {wall:.0f} s{machine}")


def load_equivalent(path: Path = EQUIVALENT) -> dict[str, str]:
    """``mutation/equivalent.txt``: mutant name -> the reason it is equivalent."""
    out: dict[str, str] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        if not reason.strip():
            raise SystemExit(f"{path}: {name}: no reason given")
        out[name] = reason.strip()
    return out


def _copy_tree(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    ignore = shutil.ignore_patterns(".git", "build", "mutants", ".venv", "node_modules",
                                    "__pycache__", ".hypothesis", ".pytest_cache",
                                    ".ruff_cache", "*.egg-info", "state", "test-output")
    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)


def _write_config(dest: Path, name: str, target: str, tests: list[str],
                  fresh: bool = False) -> None:
    text = (dest / "pyproject.toml").read_text(encoding="utf-8")
    text = re.sub(r"(?ms)^\[tool\.mutmut\].*?(?=^\[|\Z)", "", text)
    tests_present = [t for t in tests if (dest / t).exists()]
    source = target.split("/")[0]
    text += (
        "\n[tool.mutmut]\n"
        f"source_paths = [{json.dumps(source)}]\n"
        f"only_mutate = [{json.dumps(target)}]\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(tests_present)}\n"
        # no doctests, no stop-at-the-first-failure tricks: the tests as CI runs them
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "--no-header", '
        '"--override-ini=addopts=", "-m", "not e2e", "-p", "tests.support.mutation_plugin", '
        '"-p", "no:unraisableexception", "-p", "no:threadexception"'
        + "".join(f', "--deselect", {json.dumps(d)}'
                  for d in DESELECT + MODULE_DESELECT.get(name, [])) + "]\n"
        "also_copy = [\"firmware_bridge\", \"shoe_controller\", \"calibration\", \"tests\", "
        "\"systemd\", \"docs\", \"examples\", \"README.md\"]\n"
        # a hang is killed after (the tests' time + 20 s) x 4 of wall time: generous, so a
        # worker slowed by a loaded machine is not taken for a hang (a timeout counts as
        # killed, so a tight limit would flatter the score)
        "timeout_constant = 20.0\n"
        "timeout_multiplier = 4.0\n"
        # never fork workers from the process that ran the clean tests: the game core
        # memoises per table (table_for's Settler), and forked workers would inherit the
        # unmutated memos and report most mutants of settlement.py as survivors
        'process_isolation = "forkserver"\n'
    )
    # tests/support/mutation_plugin.py: code run at import credited to every test and
    # re-imported with the mutant active; collection errors apart; fastest tests first
    if fresh:
        # no worker server collection at all: nothing of the project imported before
        # the mutant is set (the plugin also re-imports every run: MUTATION_FRESH)
        text += ('forkserver_warmup = "import"\n'
                 f"preload_modules_file = {json.dumps(str(ROOT / 'mutation' / 'preload.txt'))}\n")
    else:
        text += 'forkserver_warmup = "collect"\n'
    (dest / "pyproject.toml").write_text(text, encoding="utf-8")


def results(workdir: Path, env: dict[str, str]) -> dict[str, str]:
    """mutant name -> status, from ``mutmut results --all true``."""
    proc = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"],
                          cwd=workdir, env=env, capture_output=True, text=True, check=False)
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        m = _RESULT.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


#: the mutmut processes running now (each leads a session of its own)
_children: set[int] = set()


def _set_autogroup(pid: int, nice: int) -> None:
    """Give the session of ``pid`` (a module's mutmut, started in a session of its own)
    the campaign's niceness. On a kernel that shares CPU between sessions first
    (``sched_autogroup_enabled``), ``nice`` alone ranks processes only inside one
    session; COORD's rule is one session per long job, with its niceness written there."""
    with contextlib.suppress(OSError):  # no autogroups here: nice alone ranks them
        Path(f"/proc/{pid}/autogroup").write_text(f"{nice}\n")


def _stop_children() -> None:
    """End every module's mutmut still running (its whole session: fork server and
    workers), e.g. when the campaign is interrupted."""
    for pid in list(_children):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)


def missing_tests(name: str) -> list[str]:
    """The test files of module ``name``'s list that are not in this tree (listed before
    they land): skipped by the run, and printed with its figures."""
    return [t for t in MODULES[name][1] if not (ROOT / t).is_file()]


def mutant_names(workdir: Path, target: str, env: dict[str, str]) -> list[str]:
    """Every mutant mutmut makes of ``target`` (full names), by mutmut's own generator,
    in ``workdir`` (whose pyproject.toml has the module's [tool.mutmut] section)."""
    code = ("import sys\n"
            "from mutmut.mutation.file_mutation import mutate_file_contents\n"
            "t = sys.argv[1]\n"
            "r = mutate_file_contents(t, open(t, encoding='utf-8').read())\n"
            "print('\\n'.join(r.mutant_names))\n")
    proc = subprocess.run([sys.executable, "-c", code, target], cwd=workdir, env=env,
                          capture_output=True, text=True, check=True)
    module = target.removesuffix(".py").replace("/", ".")
    return [f"{module}.{n}" for n in proc.stdout.split()]


def to_run(names: list[str], only: list[str] | None, equivalent: dict[str, str]
           ) -> tuple[list[str], list[str]]:
    """(the mutants to run, the listed equivalents left out): ``only``'s patterns (or
    all), less the mutants listed in equivalent.txt. Leaving a listed one out never
    raises a score: run, it either survives (listed: out of the score either way) or is
    killed, which would count it as killed, (k + 1) / (n + 1) >= k / n.

    >>> to_run(["m.x_f__mutmut_1", "m.x_f__mutmut_2", "m.x_g__mutmut_1"], None,
    ...        {"m.x_f__mutmut_2": "why"})
    (['m.x_f__mutmut_1', 'm.x_g__mutmut_1'], ['m.x_f__mutmut_2'])
    >>> to_run(["m.x_f__mutmut_1", "m.x_f__mutmut_2", "m.x_g__mutmut_1"], ["m.x_f*"],
    ...        {"m.x_f__mutmut_2": "why"})
    (['m.x_f__mutmut_1'], ['m.x_f__mutmut_2'])
    """
    chosen = [n for n in names
              if only is None or any(n == p or fnmatch.fnmatchcase(n, p) for p in only)]
    return ([n for n in chosen if n not in equivalent],
            [n for n in chosen if n in equivalent])


def run_module(name: str, nice: int, max_children: int, only: list[str] | None = None,
               report_only: bool = False, workdir_name: str | None = None,
               fresh: bool = False, profile: bool = False,
               run_equivalent: bool = False) -> dict[str, object]:
    target, tests = MODULES[name]
    workdir = BUILD / (workdir_name or name)
    if not report_only:
        _copy_tree(workdir)
        _write_config(workdir, name, target, tests, fresh)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # mutmut puts its mutants/ first; nothing else may win
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # the property tests: fewer examples, derandomised, no shrinking (tests/conftest.py)
    env.update(MUTATION_ENV)
    if fresh:
        env["MUTATION_FRESH"] = "1"
    # every mutant run's CPU and failing test (the profile, and the killer hints)
    env["MUTATION_PROFILE"] = "1"
    env["MUTATION_KILLERS"] = os.pathsep.join(str(k) for k in (KILLERS, BUILD_KILLERS))
    if not report_only:
        (workdir / "mutants" / "mutation-profile.jsonl").unlink(missing_ok=True)
    started = time.monotonic()
    skipped_file = workdir / "mutation-equivalent-not-run.txt"
    selection = only
    if not report_only:
        skipped_file.unlink(missing_ok=True)
        if not run_equivalent:
            # the listed equivalents are survivors, and survivors run every test
            # mapped to them (journal lists 116): not run, and reported
            try:
                names = mutant_names(workdir, target, env)
            except (OSError, subprocess.CalledProcessError) as e:  # run them all
                print(f"{name}: mutant names not found ({e}): equivalents run too",
                      flush=True)
                names = []
            chosen, skipped = to_run(names, only, load_equivalent())
            if chosen and skipped:
                selection = chosen
                skipped_file.write_text("".join(f"{m}\n" for m in skipped))
    skipped_names = (set(skipped_file.read_text().split()) if skipped_file.exists()
                     else set())
    cmd = ["nice", "-n", str(nice), sys.executable, "-m", "mutmut", "run",
           "--max-children", str(max_children), *(selection or [])]
    log = workdir / "mutmut-run.log"
    returncode, cpu = 0, 0.0
    if not report_only:
        with log.open("w") as f:
            proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=f,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            _children.add(proc.pid)
            _set_autogroup(proc.pid, nice)
            # the CPU time of mutmut and every process under it (its fork server and
            # workers are reaped by their parents, so their user+sys time is folded into
            # this child's): this child's alone, so modules run side by side (--jobs)
            # each get their own figure; unlike the wall time it does not grow with a
            # shared machine's load
            _pid, status, usage = os.wait4(proc.pid, 0)
            _children.discard(proc.pid)
            returncode = proc.returncode = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
    elapsed = time.monotonic() - started
    times = workdir / "mutation-times.json"
    if report_only:  # the times of the run that made these results
        saved = json.loads(times.read_text()) if times.exists() else {}
        elapsed, cpu = saved.get("wall_seconds", 0.0), saved.get("cpu_seconds", 0.0)
    else:
        times.write_text(json.dumps({"wall_seconds": elapsed, "cpu_seconds": cpu,
                                     "command": [*cmd[:7], f"... {len(cmd) - 7} more"]
                                     if len(cmd) > 12 else cmd}) + "\n")
    status = results(workdir, env)
    if not report_only:
        _record_killers(workdir)
    if returncode != 0 and not status:
        tail = log.read_text(errors="replace").splitlines()[-20:]
        raise SystemExit(f"mutmut failed on {name} (see {log}):\n" + "\n".join(tail))
    # a mutant whose tests could not even be collected (an import raised) is not killed by
    # a failing test: reported apart ("import"), not counted as killed
    errors = workdir / "mutants" / "mutation-import-errors"
    import_errors = sorted(p.name for p in errors.iterdir()) if errors.is_dir() else []
    for m in import_errors:
        if m in status:
            status[m] = "import error"
    equivalent = load_equivalent()
    # listed equivalents left out of the run: counted as listed survivors (out of the
    # score), as a run would have found them, or killed them (see to_run)
    for m in skipped_names:
        if status.get(m) == "not checked":
            status[m] = "survived"
    killed = sum(1 for s in status.values() if s in ("killed", "timeout"))
    survivors = sorted(m for m, s in status.items() if s == "survived")
    listed = [m for m in survivors if m in equivalent]
    unlisted = [m for m in survivors if m not in equivalent]
    # mutants not run (a run stopped early, or --only): reported, not counted
    unchecked = sum(1 for s in status.values() if s == "not checked")
    status = {m: s for m, s in status.items() if s != "not checked"}
    timeouts = sum(1 for s in status.values() if s == "timeout")
    other = {m: s for m, s in status.items()
             if s not in ("killed", "timeout", "survived")}
    total = len(status)
    denominator = total - len(listed)
    score = killed / denominator if denominator else 1.0
    return {"module": name, "file": target, "mutants": total, "killed": killed,
            "survived": len(survivors), "equivalent": len(listed), "other": other,
            "unlisted": unlisted, "score": score, "seconds": elapsed, "cpu_seconds": cpu,
            "timeouts": timeouts, "unchecked": unchecked, "import_errors": len(import_errors),
            "equivalent_not_run": len(skipped_names & set(listed))}


def profile_summary(workdir: Path, cpu_seconds: float) -> str:
    """Where a module's CPU went, from the plugin's ``mutation-profile.jsonl`` (a line per
    pytest session; a mutant with killer hints may have two): the mutant runs' pytest
    start, collection and tests, and the rest (mutant generation, stats, clean and
    forced-fail runs, the fork server's warm-up)."""
    path = workdir / "mutants" / "mutation-profile.jsonl"
    if not path.exists():
        return "    profile: none recorded"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    start = sum(r["start"] - r.get("begin", 0.0) for r in lines)
    collect = sum(r["collected"] - r["start"] for r in lines)
    tests = sum(r["end"] - r["collected"] for r in lines)
    worker: dict[str, float] = {}
    killed: set[str] = set()
    for r in lines:
        worker[r["mutant"]] = max(worker.get(r["mutant"], 0.0), r["end"])
        if r["failed"]:
            killed.add(r["mutant"])
    n = len(worker) or 1
    firsts = [r for r in lines if r.get("phase") == "first"]
    first_kills = sum(1 for r in firsts if r["failed"])

    def per(names: list[str]) -> float:
        return sum(worker[m] for m in names) / len(names) if names else 0.0

    return (f"    profile: {len(worker)} mutant runs, {sum(worker.values()):.0f} CPU s "
            f"(pytest start {start / n:.2f} s, collection {collect / n:.2f} s, tests "
            f"{tests / n:.2f} s a mutant; killed {per(sorted(killed)):.2f} s, not killed "
            f"{per([m for m in worker if m not in killed]):.2f} s; killer hints first: "
            f"{first_kills} of {len(firsts)}); outside them "
            f"{cpu_seconds - sum(worker.values()):.0f} CPU s (stats, clean run, warm-up)")


def killers_of(profile: Path) -> dict[str, dict[str, int]]:
    """function -> {test: mutants of it the test killed}, from a run's profile.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "p.jsonl"
    >>> _ = f.write_text('{"mutant": "m.x_f__mutmut_1", "failed": true, "last": "t::a"}\\n'
    ...                  '{"mutant": "m.x_f__mutmut_2", "failed": true, "last": "t::a"}\\n'
    ...                  '{"mutant": "m.x_f__mutmut_3", "failed": false, "last": "t::b"}\\n')
    >>> killers_of(f)
    {'m.x_f': {'t::a': 2}}
    """
    out: dict[str, dict[str, int]] = {}
    if not profile.exists():
        return out
    for line in profile.read_text(encoding="utf-8").splitlines():
        r = json.loads(line) if line.strip() else {}
        if r.get("failed") and r.get("last"):
            tests = out.setdefault(r["mutant"].partition("__mutmut_")[0], {})
            tests[r["last"]] = tests.get(r["last"], 0) + 1
    return out


def _record_killers(workdir: Path) -> None:
    """Merge this run's killers into ``build/mutation/killers.json`` (a function's entry
    is replaced by this run's: its tests may have changed)."""
    found = killers_of(workdir / "mutants" / "mutation-profile.jsonl")
    if not found:
        return
    with _killers_lock:
        try:
            known = json.loads(BUILD_KILLERS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
        known.update(found)
        BUILD_KILLERS.parent.mkdir(parents=True, exist_ok=True)
        BUILD_KILLERS.write_text(json.dumps(known, indent=0, sort_keys=True) + "\n",
                                 encoding="utf-8")


def totals(rows: list[dict[str, object]]) -> dict[str, object]:
    """The figures of several modules summed: the score over all their mutants.

    >>> t = totals([{"mutants": 10, "killed": 9, "timeouts": 1, "survived": 1,
    ...              "equivalent": 1, "other": {}, "seconds": 5.0, "cpu_seconds": 8.0,
    ...              "unchecked": 0},
    ...             {"mutants": 4, "killed": 2, "timeouts": 0, "survived": 1,
    ...              "equivalent": 0, "other": {"m": "no tests"}, "seconds": 3.0,
    ...              "cpu_seconds": 4.0, "unchecked": 2}])
    >>> t["mutants"], t["killed"], round(t["score"], 4), t["cpu_seconds"], t["unchecked"]
    (14, 11, 0.8462, 12.0, 2)
    """
    keys = ("mutants", "killed", "timeouts", "survived", "equivalent", "seconds",
            "cpu_seconds", "unchecked")
    out: dict[str, object] = {k: sum(r[k] for r in rows) for k in keys}  # type: ignore[misc]
    out["other"] = {m: s for r in rows for m, s in r["other"].items()}  # type: ignore[union-attr]
    denominator = out["mutants"] - out["equivalent"]  # type: ignore[operator]
    out["score"] = out["killed"] / denominator if denominator else 1.0  # type: ignore[operator]
    return out


#: issue 15's targets: the score of shoe_controller/game/ as a whole, and of each other
#: module on its own
TARGETS = {"game/": 0.98, "framing": 0.95, "protocol": 0.95, "journal": 0.95, "passes": 0.95}


def groups(rows: list[dict[str, object]]) -> list[tuple[str, dict[str, object]]]:
    """The figures per target of issue 15: ``game/`` (every module of
    shoe_controller/game/ summed), then each other module on its own.

    >>> g = groups([{"module": "shoe", "file": "shoe_controller/game/shoe.py",
    ...              "mutants": 10, "killed": 9, "timeouts": 0, "survived": 1,
    ...              "equivalent": 0, "other": {}, "seconds": 1.0, "cpu_seconds": 2.0,
    ...              "unchecked": 0},
    ...             {"module": "round", "file": "shoe_controller/game/round.py",
    ...              "mutants": 10, "killed": 10, "timeouts": 0, "survived": 0,
    ...              "equivalent": 0, "other": {}, "seconds": 1.0, "cpu_seconds": 2.0,
    ...              "unchecked": 0},
    ...             {"module": "framing", "file": "firmware_bridge/framing.py",
    ...              "mutants": 4, "killed": 3, "timeouts": 0, "survived": 1,
    ...              "equivalent": 1, "other": {}, "seconds": 1.0, "cpu_seconds": 2.0,
    ...              "unchecked": 0, "score": 1.0}])
    >>> [(name, t["mutants"], t["score"]) for name, t in g]
    [('game/', 20, 0.95), ('framing', 4, 1.0)]
    """
    game = [r for r in rows if str(r["file"]).startswith("shoe_controller/game/")]
    out = [("game/", totals(game))] if game else []
    return out + [(str(r["module"]), r) for r in rows if r not in game]


def _row(name: str, r: dict[str, object]) -> str:
    return (f"{name:16}{r['mutants']:>8}{r['killed']:>8}{r['timeouts']:>7}"
            f"{r['survived']:>9}{r['equivalent']:>7}{len(r['other']):>6}"  # type: ignore[arg-type]
            f"{r['score']:>8.1%}{r['cpu_seconds']:>8.0f}{r['seconds']:>8.0f}"
            f"{r['unchecked']:>7}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help=f"any of: {', '.join(MODULES)}")
    ap.add_argument("--list", action="store_true", help="list the modules and their tests")
    ap.add_argument("--nice", type=int, default=15)
    ap.add_argument("--max-children", type=int, default=os.cpu_count() or 1,
                    help="parallel test processes (default: one per core; they run under "
                         "nice, so a shared machine's other work goes first)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="modules run side by side (default: one per core; the longest "
                         "first): their stats and clean runs use one core each")
    ap.add_argument("--cheapest-first", action="store_true",
                    help="start the modules cheapest first (the most modules complete when "
                         "a run must stop at a set time), not the longest first")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--only", action="append",
                    help="run only the mutants matching this name pattern (a quick check)")
    ap.add_argument("--as", dest="workdir_name", metavar="DIR",
                    help="work in build/mutation/DIR (e.g. a recheck of survivors beside a "
                         "run still going)")
    ap.add_argument("--only-file", type=Path,
                    help="run only the mutants named in this file, one per line")
    ap.add_argument("--fresh", action="store_true",
                    help="import the project afresh in every worker for every module "
                         "(slower; no state inherited from mutmut's clean run at all)")
    ap.add_argument("--profile", action="store_true",
                    help="record each mutant run's CPU (pytest start, collection, tests) and "
                         "print where the module's CPU went")
    ap.add_argument("--run-equivalent", action="store_true",
                    help="run the mutants listed in mutation/equivalent.txt too (by default "
                         "they are not run: counted as listed survivors, which never "
                         "raises a score; run them to check the list is not stale)")
    ap.add_argument("--save-killers", action="store_true",
                    help="run nothing: write the killer hints of this checkout's runs "
                         "(build/mutation/killers.json) into mutation/killers.json")
    ap.add_argument("--report", action="store_true",
                    help="run nothing: report the results already in build/mutation/<module>")
    args = ap.parse_args(argv)
    if args.save_killers:
        known = json.loads(KILLERS.read_text(encoding="utf-8")) if KILLERS.exists() else {}
        known.update(json.loads(BUILD_KILLERS.read_text(encoding="utf-8")))
        KILLERS.write_text(json.dumps(known, indent=0, sort_keys=True) + "\n",
                           encoding="utf-8")
        print(f"{KILLERS}: {len(known)} functions")
        return 0
    if args.list:
        for name, (target, tests) in MODULES.items():
            print(f"{name:11} {target}\n            {' '.join(tests)}")
        return 0
    names = args.modules or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        ap.error(f"unknown module(s) {unknown}: choose from {', '.join(MODULES)}")
    if args.workdir_name and len(names) > 1:
        ap.error("--as names one work directory: give one module with it")
    only = list(args.only or [])
    if args.only_file:
        only += [x.strip() for x in args.only_file.read_text().split() if x.strip()]
    header = (f"{'module':16}{'mutants':>8}{'killed':>8}{'(hang)':>7}{'survived':>9}"
              f"{'equiv.':>7}{'other':>6}{'score':>8}{'CPU s':>8}{'wall s':>8}{'unrun':>7}")
    print(header, flush=True)
    printing = threading.Lock()
    load = LoadWatch()

    def one(name: str) -> dict[str, object]:
        try:
            r = run_module(name, args.nice, args.max_children, only or None, args.report,
                           args.workdir_name, args.fresh, args.profile, args.run_equivalent)
        except SystemExit as e:  # mutmut could not run this module: the others go on
            with printing:
                print(f"{name}: FAILED: {e}", flush=True)
            return {"module": name, "file": MODULES[name][0], "mutants": 0, "killed": 0,
                    "survived": 0, "equivalent": 0, "other": {}, "unlisted": [],
                    "score": 0.0, "seconds": 0.0, "cpu_seconds": 0.0, "timeouts": 0,
                    "unchecked": 0, "import_errors": 0, "failed": str(e)}
        with printing:  # each module's line as soon as it is done
            print(_row(name, r), flush=True)
            if r.get("equivalent_not_run"):
                print(f"    {r['equivalent_not_run']} listed equivalents not run "
                      "(--run-equivalent runs them)", flush=True)
            for t in missing_tests(name):
                print(f"    test file not in this tree, skipped: {t}", flush=True)
            if args.profile:
                print(profile_summary(BUILD / (args.workdir_name or name),
                                      r["cpu_seconds"]), flush=True)
            for m in r["unlisted"]:
                print(f"    survived: {m}  (mutmut show {m}, in "
                      f"build/mutation/{args.workdir_name or name})", flush=True)
            for m, st in r["other"].items():
                print(f"    {st}: {m}", flush=True)
        return r

    started = time.monotonic()
    jobs = 1 if args.report else max(1, args.jobs)
    # the longest modules first, so the last ones to finish are short
    order = sorted(names, key=lambda n: -COST_HINT.get(n, 0))
    if args.cheapest_first:
        order.reverse()
    # an interrupt or a TERM ends the modules running, whose sessions are their own
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # and so does SIGINT when the campaign was started in the background (a shell's `&`
    # sets SIGINT to ignored, which every mutmut inherited: kill -INT did nothing)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        done = dict(zip(order, pool.map(one, order), strict=True))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        _stop_children()
        raise
    pool.shutdown()
    wall = time.monotonic() - started
    watched = load.stop()
    rows = [done[n] for n in names]
    if len(rows) > 1:
        total = totals(rows)
        cores = os.cpu_count() or 1
        if not args.report:
            total["seconds"] = wall  # the campaign's wall time, modules side by side
        print(f"\n{header}", flush=True)
        for r in rows:
            print(_row(str(r["module"]), r), flush=True)
        print(_row("total", total), flush=True)
        print("\nissue 15's targets (score = killed / (mutants - listed equivalent); "
              "unrun mutants count neither way):", flush=True)
        for label, g in groups(rows):
            target = TARGETS.get(label)
            verdict = ("" if target is None else
                       f"  target {target:.0%}: {'met' if g['score'] >= target else 'NOT met'}")
            if g["unchecked"]:
                verdict += f" ({g['unchecked']} not run)"
            print(_row(label, g) + verdict, flush=True)
        print(f"CPU {total['cpu_seconds']:.0f} s over all modules: about "
              f"{total['cpu_seconds'] / cores:.0f} s of wall time on an idle "
              f"{cores}-core machine; wall {total['seconds']:.0f} s here "
              f"({jobs} modules at a time, {args.max_children} workers each)",
              flush=True)
    if not args.report:
        print(watched, flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    for r in rows:
        if r.get("failed"):
            print(f"{r['module']}: FAILED, not measured (see its mutmut-run.log)", flush=True)
    bad = [r for r in rows if r["unlisted"] or r.get("failed")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
