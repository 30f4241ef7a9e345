"""The capability check the jail makes before it sets anything up (sandlot/jail/privileges.py)."""

from __future__ import annotations

import pytest

from sandlot.errors import JailUnavailable
from sandlot.jail.privileges import CAPABILITIES, check_capabilities, effective


def status(capeff: int) -> str:
    return f"Name:\tpython3\nCapInh:\t0000000000000000\nCapEff:\t{capeff:016x}\nSeccomp:\t0\n"


ALL_NEEDED = sum(1 << bit for _, bit, _ in CAPABILITIES)


@pytest.mark.root
def test_this_process_has_every_capability_the_jail_needs():
    """The tests run as root on the machine: the real /proc/self/status passes."""
    check_capabilities()
    assert effective() & ALL_NEEDED == ALL_NEEDED


def test_every_needed_capability_present_passes():
    check_capabilities(status(ALL_NEEDED))


@pytest.mark.parametrize("name, bit", [(name, bit) for name, bit, _ in CAPABILITIES])
def test_a_missing_capability_is_named_with_its_flag(name, bit):
    with pytest.raises(JailUnavailable) as err:
        check_capabilities(status(ALL_NEEDED & ~(1 << bit)))
    message = str(err.value)
    assert name in message and f"--cap-add {name.removeprefix('CAP_')}" in message
    others = [other for other, _, _ in CAPABILITIES if other != name]
    assert not any(other in message for other in others), message


def test_no_capability_at_all_names_every_one():
    with pytest.raises(JailUnavailable) as err:
        check_capabilities(status(0))
    assert all(name in str(err.value) for name, _, _ in CAPABILITIES)


@pytest.mark.parametrize("text", ["", "CapEff:\n", "CapEff:\tzz\n", "Name:\tx\n"])
def test_an_unreadable_status_fails_closed(text):
    with pytest.raises(JailUnavailable):
        check_capabilities(text)
