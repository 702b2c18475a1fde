"""Scale benchmark: squeezing the replay's dates into a span, the originals' kept or not."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from scale_bench import squeezed  # noqa: E402

START = datetime(2023, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class _Turn:
    text: str
    at: datetime


def _batches() -> list[list[_Turn]]:
    """Two original conversations (a month each) and two copies, a year apart each."""
    out = []
    for take in range(2):
        suffix = f" (take {take})" if take else ""
        for conv in range(2):
            begin = START + timedelta(days=366 * take + 10 * conv)
            out.append([_Turn(f"turn {i}{suffix}", begin + timedelta(days=15 * i))
                        for i in range(3)])
    return out


def test_squeezing_fits_every_date_into_the_span_keeping_order() -> None:
    out = squeezed(_batches(), 30)
    dates = [t.at for batch in out for t in batch]
    assert dates[0] == START
    assert max(dates) - START == timedelta(days=30)
    assert [t.text for b in out for t in b] == [t.text for b in _batches() for t in b]


def test_kept_originals_keep_their_dates_and_the_copies_follow_them_within_the_span() -> None:
    batches = _batches()
    out = squeezed(batches, 30, originals_kept=True)
    assert out[:2] == batches[:2]  # the originals, untouched
    end = max(t.at for b in batches[:2] for t in b)
    copies = [t.at for b in out[2:] for t in b]
    assert min(copies) > end
    assert max(copies) - min(copies) == timedelta(days=30)
    before = [t.at for b in batches[2:] for t in b]
    assert sorted(range(len(copies)), key=copies.__getitem__) == \
        sorted(range(len(before)), key=before.__getitem__)  # their order kept


def test_kept_originals_without_copies_keep_their_dates() -> None:
    originals = _batches()[:2]
    assert squeezed(originals, 30, originals_kept=True) == originals
    assert squeezed(originals, 30)[0][-1].at != originals[0][-1].at  # squeezed when not kept
