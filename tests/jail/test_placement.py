"""Which CPUs each slot is kept to: the `slot_cpus` setting's syntax and the `auto` spread."""

from __future__ import annotations

import pytest

from sandlot.jail import placement


@pytest.mark.parametrize(
    ("slots", "cpus", "sets"),
    [
        (2, [0, 1], ((0,), (1,))),
        (4, [0, 1], ((0,), (1,), (0,), (1,))),  # more slots than CPUs: round them again
        (2, [0, 1, 2, 3, 4, 5, 6, 7], ((0, 2, 4, 6), (1, 3, 5, 7))),
        (3, [2, 5, 9, 11], ((2, 11), (5,), (9,))),  # a container's cpuset: only what it has
        (1, [3], ((3,),)),
    ],
)
def test_auto_spreads_the_slots_over_the_cpus_the_server_may_use(slots, cpus, sets) -> None:
    assert placement.resolve_cpu_sets("auto", slots, cpus) == sets


def test_every_cpu_is_some_slots_and_the_slots_share_them_evenly() -> None:
    for ncpu in range(1, 17):
        for slots in range(1, 33):
            sets = placement.spread(slots, range(ncpu))
            assert len(sets) == slots
            assert set().union(*sets) == set(range(ncpu))
            assert max(map(len, sets)) - min(map(len, sets)) <= 1


def test_named_lists_are_used_round_again_and_none_keeps_no_slot() -> None:
    assert placement.resolve_cpu_sets("0-1; 3,5", 3, range(8)) == ((0, 1), (3, 5), (0, 1))
    assert placement.resolve_cpu_sets("none", 4, range(8)) == ()
    assert placement.resolve_cpu_sets(" AUTO ", 2, [0, 1]) == ((0,), (1,))


@pytest.mark.parametrize("sets", [((0,), (1,)), ((0, 1, 2, 3), (4, 5, 7)), ((0, 2, 4),), ()])
def test_describe_says_what_parse_reads_back(sets) -> None:
    text = placement.describe_cpu_sets(sets)
    assert placement.parse_cpu_sets(text) == sets


def test_describe_writes_ranges() -> None:
    assert placement.describe_cpu_sets(((0, 1, 2, 3), (4, 5, 7))) == "0-3;4-5,7"


def test_cpus_the_server_may_not_use_are_named() -> None:
    assert placement.outside(((0,), (1,)), [0, 1]) is None
    assert placement.outside(((0,), (6, 7)), [0, 1, 2]) == (
        "slot_cpus names CPU 6-7, which this server may not use (it may use 0-2)"
    )


def test_workers_split_one_spread_and_not_each_their_own() -> None:
    """Two workers over 4 slots on CPUs 0-3: worker 0's slots on 0 and 1, worker 1's on 2 and
    3, not both workers' on 0 and 1."""
    from sandlot.api.server import share_configs
    from sandlot.config import Config, worker_shares

    cfg = Config.load(slots=4, slot_cpus="0-3")
    assert [c.slot_cpus for c in share_configs(cfg, worker_shares(4, 2))] == ["0-3;0-3"] * 2
    cfg = Config.load(slots=4, slot_cpus="0;1;2;3")
    assert [c.slot_cpus for c in share_configs(cfg, worker_shares(4, 2))] == ["0;1", "2;3"]
    allowed = placement.allowed_cpus()
    cfg = Config.load(slots=4)
    spread = placement.spread(4, allowed)
    assert [c.slot_cpus for c in share_configs(cfg, worker_shares(4, 2))] == [
        placement.describe_cpu_sets(spread[:2]), placement.describe_cpu_sets(spread[2:])
    ]  # fmt: skip


def test_a_setting_of_a_hundred_thousand_lists_is_read_and_used_round_again() -> None:
    """Hostile in size only: every list is read (each checked), the slots take what they need."""
    setting = ";".join(str(k % 8) for k in range(100_000))
    assert placement.resolve_cpu_sets(setting, 3, range(8)) == ((0,), (1,), (2,))
    with pytest.raises(ValueError, match="'x' is not a CPU number"):
        placement.parse_cpu_sets(setting + ";x")
