"""`replay` streams (issue 14, finding 6: 12 MB of tokens took 1.26 GB): the tokenizer
reads pieces and keeps none of them, the first pass checks every token without keeping
the inputs, the second runs and prints as it goes. Figures: bench/replay.py."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from shoe_controller.game.replay_text import MAX_TOKEN, ReplayParseError, iter_tokens

ROOT = Path(__file__).resolve().parents[1]


def reference_tokens(text: str) -> list[tuple[str, int, int, int]]:
    """The format's definition, the simple way (whole text, line by line)."""
    out, number = [], 0
    for line_no, line in enumerate(text.split("\n"), start=1):
        body = line.split("#", 1)[0]
        col = 0
        for part in body.split():
            col = body.index(part, col)
            number += 1
            out.append((part, number, line_no, col + 1))
            col += len(part)
    return out


def test_tokens_read_in_pieces_are_the_tokens_of_the_whole_text():
    rng = random.Random(14)
    words = ["AS", "10s", "qhv", "#", "# a comment", "\n", " ", "  ", "\t", "SHOE",
             "RESULT", "KD^", "#x#", "\n\n"]
    for _ in range(2000):
        text = "".join(rng.choice(words) for _ in range(rng.randint(0, 50)))
        want = reference_tokens(text)
        for size in (1, 2, 3, 7, 64, 10_000):
            pieces = [text[i:i + size] for i in range(0, len(text), size)]
            assert [tuple(t) for t in iter_tokens(pieces)] == want, (text, size)


def test_a_comment_or_a_run_of_text_of_any_length_holds_no_memory():
    long_comment = ["AS # " + "x" * 100_000] + ["y" * 65536] * 50 + ["\nKD"]
    assert [t.text for t in iter_tokens(long_comment)] == ["AS", "KD"]
    with pytest.raises(ReplayParseError) as exc:
        list(iter_tokens(["QH " + "A" * 65536, "B" * 65536]))
    assert exc.value.token.number == 2 and len(exc.value.token.text) <= MAX_TOKEN + 3
    assert f"more than {MAX_TOKEN} characters" in str(exc.value)


#: Runs the CLI, then writes the process's own peak RSS (VmHWM, kB) to $HWM_FILE
#: (ru_maxrss would count the forking parent's memory too).
_WRAP = ("import os, re, sys\n"
         "from shoe_controller.cli import main\n"
         "try:\n"
         "    rc = main(sys.argv[1:])\n"
         "finally:\n"
         "    hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]\n"
         "    open(os.environ['HWM_FILE'], 'w').write(hwm)\n"
         "sys.exit(rc)\n")


def _replay(path: Path | None, stdin: Path | None = None) -> tuple[int, str, str, int]:
    """`shoe-controller replay --json FILE|-` in its own process: (exit status, stdout,
    stderr, its own peak RSS in MiB)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        hwm = Path(d) / "hwm"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HWM_FILE": str(hwm)}
        with open(stdin or os.devnull, "rb") as fin:
            proc = subprocess.run([sys.executable, "-c", _WRAP, "replay", "--json",
                                   str(path) if path else "-"], stdin=fin,
                                  capture_output=True, env=env, cwd=ROOT, timeout=300)
        return (proc.returncode, proc.stdout.decode(), proc.stderr.decode(),
                int(hwm.read_text()) // 1024)


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """2 MB of shuffled 8-deck shoes (630,000 tokens), one bad token at the end."""
    rng = random.Random(7)
    deck = [r + s for r in "A23456789TJQK" for s in "SHDC"] * 8
    path = tmp_path_factory.mktemp("replay") / "big.txt"
    with path.open("w") as f:
        size = 0
        while size < 2 * 1024 * 1024:
            rng.shuffle(deck)
            line = " ".join(["SHOE", *deck]) + "\n"
            f.write(line)
            size += len(line)
        f.write("KD QX\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("via", ["file", "stdin"])
def test_a_large_input_is_checked_with_bounded_memory_and_nothing_printed(big, via):
    rc, out, err, rss = _replay(big if via == "file" else None,
                                stdin=big if via == "stdin" else None)
    assert rc == 2 and out == ""
    lines = big.read_text().count("\n")
    assert f"'QX' (line {lines}, column 4)" in err, err
    # the old replay held the text, every token and every input (12 MB took 1.26 GB:
    # about 200 MB here); streaming, the interpreter and its modules are most of it
    assert rss < 100, f"peak RSS {rss} MiB"
