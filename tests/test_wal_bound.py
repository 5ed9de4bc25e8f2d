"""The journal's WAL stays bounded over a whole shoe dealt as fast as the daemon takes it
(issue 17: it reached 29 MB before the first checkpoint), and is emptied at the shoe's
end."""

from __future__ import annotations

from shoe_controller.sim.walprobe import largest_wal_over_shoes


def test_the_wal_stays_under_8_mb_over_a_fast_shoe_and_is_emptied_after(tmp_path):
    figures = largest_wal_over_shoes(str(tmp_path), seed="wal-bound")
    assert figures.events > 700  # a whole shoe (~70 rounds), not a few cards
    assert 0 < figures.largest < 8 * 1024 * 1024, figures
    assert figures.at_end == 0, figures  # TRUNCATE once the shoe ended and all was quiet
