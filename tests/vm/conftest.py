"""The VM's image is made from the start of the session when a VM test is to run (guest.py)."""

from __future__ import annotations

import pytest

from tests.vm.guest import close_preparation, is_root, preparation


def pytest_collection_finish(session: pytest.Session) -> None:
    if is_root() and any(item.get_closest_marker("vm") for item in session.items):
        preparation()


def pytest_sessionfinish(session: pytest.Session) -> None:
    close_preparation()
