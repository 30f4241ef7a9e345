"""Every shipped dataset is attacked by some reward-hack battery
(tests/security/test_reward_hacks_*.py).

A dataset that no battery names could lose its seal without a test failing, so a new dataset
must join a battery's `COVERS` before it ships.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from sandlot.judge.datasets import BUILTIN

SHIPPED = {spec.name for spec in BUILTIN}

BATTERIES = sorted(p.stem for p in Path(__file__).parent.glob("test_reward_hacks_*.py"))


def covered() -> set[str]:
    names: set[str] = set()
    for module in BATTERIES:
        names |= importlib.import_module(f"{__package__}.{module}").COVERS
    return names


def test_every_shipped_dataset_is_attacked_by_a_battery() -> None:
    assert not SHIPPED - covered()


def test_batteries_name_only_shipped_datasets() -> None:
    assert not covered() - SHIPPED
