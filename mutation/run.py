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

Not part of ``make test`` or CI: a full campaign takes tens of minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "mutation"
EQUIVALENT = ROOT / "mutation" / "equivalent.txt"

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
                        "tests/test_insurance_odds_reference.py"]),
    "odds": ("shoe_controller/game/odds.py", ["tests/test_odds.py", "tests/test_protection.py",
                                              "tests/test_odds_reference.py"]),
    "protection": ("shoe_controller/game/protection.py",
                   ["tests/test_protection.py", "tests/test_integrity_shuffle_weak.py",
                    "tests/test_protection_replay.py"]),
    "replay_text": ("shoe_controller/game/replay_text.py",
                    ["tests/test_replay.py", "tests/test_replay_streaming.py",
                     "tests/test_game_shoe.py", "tests/test_replay_text_reference.py"]),
    "roads": ("shoe_controller/game/roads.py",
              ["tests/test_roads.py", "tests/test_display_state.py",
               "tests/test_roads_reference.py"]),
    "shoe_link": ("shoe_controller/game/shoe_link.py", ["tests/test_bridge_protocol11.py"]),
    "shuffle_integrity": ("shoe_controller/game/shuffle_integrity.py",
                          ["tests/test_integrity.py", "tests/test_protection.py"]),
    "shuffle_tracking": ("shoe_controller/game/shuffle_tracking.py",
                         ["tests/test_integrity_shuffle_weak.py", "tests/test_protection.py"]),
    "framing": ("firmware_bridge/framing.py",
                ["tests/test_reference_framing.py", "tests/test_bridge_codec.py"]),
    "protocol": ("firmware_bridge/protocol.py",
                 ["tests/test_bridge_codec.py", "tests/test_protocol_doc.py"]),
    "journal": ("shoe_controller/journal.py",
                ["tests/test_journal.py", "tests/test_reference_journal.py",
                 "tests/test_journal_documented.py", "tests/test_journal_hostile.py",
                 "tests/test_wal_bound.py", "tests/test_feed.py"]),
    "passes": ("shoe_controller/vision/passes.py",
               ["tests/test_passes.py", "tests/test_reference_passes.py"]),
}

#: tests left out of every module's run: too slow to rerun per mutant, and covered by a
#: faster test against the same independent reference (the 10^6 six-value sequences take
#: 200 s under mutmut's stats; test_reference_tableau.py checks every five-card start
#: against tests/support/baccarat_ref.py in 20 s)
DESELECT = ["tests/test_game_tableau.py::test_every_six_value_sequence_agrees_with_reference"]

#: environment of the test runs: the property tests' examples are cut down (each mutant
#: runs them again) and derandomised, so a result is reproducible
MUTATION_ENV = {"HYPOTHESIS_PROFILE": "mutation", "WHOLE_SHOE_EXAMPLES": "30",
                "SHOE_PROPERTY_EXAMPLES": "60"}

_RESULT = re.compile(r"^\s*(\S+__mutmut_\d+):\s*(.+?)\s*$")


def load_equivalent() -> dict[str, str]:
    """``mutation/equivalent.txt``: mutant name -> the reason it is equivalent."""
    out: dict[str, str] = {}
    if not EQUIVALENT.exists():
        return out
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        if not reason.strip():
            raise SystemExit(f"{EQUIVALENT}: {name}: no reason given")
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
        + "".join(f', "--deselect", {json.dumps(d)}' for d in DESELECT) + "]\n"
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


def run_module(name: str, nice: int, max_children: int, only: list[str] | None = None,
               report_only: bool = False, workdir_name: str | None = None,
               fresh: bool = False) -> dict[str, object]:
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
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = ["nice", "-n", str(nice), sys.executable, "-m", "mutmut", "run",
           "--max-children", str(max_children), *(only or [])]
    log = workdir / "mutmut-run.log"
    returncode = 0
    if not report_only:
        with log.open("w") as f:
            returncode = subprocess.run(cmd, cwd=workdir, env=env, stdout=f,
                                        stderr=subprocess.STDOUT, check=False).returncode
    elapsed = time.monotonic() - started
    # CPU time of mutmut and every process under it (its fork server and workers are
    # reaped by their parents, so their user+sys time is folded into mutmut's children
    # figure): unlike the wall time it does not grow with a shared machine's load
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    times = workdir / "mutation-times.json"
    if report_only:  # the times of the run that made these results
        saved = json.loads(times.read_text()) if times.exists() else {}
        elapsed, cpu = saved.get("wall_seconds", 0.0), saved.get("cpu_seconds", 0.0)
    else:
        times.write_text(json.dumps({"wall_seconds": elapsed, "cpu_seconds": cpu,
                                     "command": cmd}) + "\n")
    status = results(workdir, env)
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
            "timeouts": timeouts, "unchecked": unchecked, "import_errors": len(import_errors)}


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
    ap.add_argument("--report", action="store_true",
                    help="run nothing: report the results already in build/mutation/<module>")
    args = ap.parse_args(argv)
    if args.list:
        for name, (target, tests) in MODULES.items():
            print(f"{name:11} {target}\n            {' '.join(tests)}")
        return 0
    names = args.modules or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        ap.error(f"unknown module(s) {unknown}: choose from {', '.join(MODULES)}")
    rows = []
    print(f"{'module':16}{'mutants':>8}{'killed':>8}{'(hang)':>7}{'survived':>9}"
          f"{'equiv.':>7}{'other':>6}{'score':>8}{'CPU s':>8}{'wall s':>8}{'unrun':>7}",
          flush=True)
    for name in names:
        only = list(args.only or [])
        if args.only_file:
            only += [x.strip() for x in args.only_file.read_text().split() if x.strip()]
        r = run_module(name, args.nice, args.max_children, only or None, args.report,
                       args.workdir_name, args.fresh)
        rows.append(r)
        print(_row(name, r), flush=True)
        for m in r["unlisted"]:
            print(f"    survived: {m}  (mutmut show {m}, in "
                  f"build/mutation/{args.workdir_name or name})")
        for m, s in r["other"].items():
            print(f"    {s}: {m}")
    if len(rows) > 1:
        total = totals(rows)
        cores = os.cpu_count() or 1
        print(_row("total", total), flush=True)
        print(f"CPU {total['cpu_seconds']:.0f} s over all modules: about "
              f"{total['cpu_seconds'] / cores:.0f} s of wall time on an idle "
              f"{cores}-core machine; wall {total['seconds']:.0f} s here",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    bad = [r for r in rows if r["unlisted"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
