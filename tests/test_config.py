"""Settings an operator can trust: each range-checked at load with a clear error, a misspelled
SANDLOT_* variable reported, and the variables the code reads all in the table."""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sandlot.config import SETTINGS, VARIABLES, Config, check_serving
from sandlot.errors import SandlotError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("SANDLOT_"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SANDLOT_SLOTS", "0", "slots must be at least 1"),
        ("SANDLOT_SLOTS", "1.5", "slots must be a whole number"),
        ("SANDLOT_PORT", "70000", "port must be at most 65535"),
        ("SANDLOT_RUN_TIMEOUT", "nan", "run_timeout must be a finite number"),
        ("SANDLOT_RUN_TIMEOUT", "inf", "run_timeout must be a finite number"),
        ("SANDLOT_RUN_TIMEOUT", "0", "run_timeout must be more than 0"),
        ("SANDLOT_RUN_TIMEOUT", "301", "run_timeout=301 is above max_run_timeout=300"),
        ("SANDLOT_MEMORY_MB", "-1", "memory_mb must be at least 1"),
        ("SANDLOT_UID_BASE", "0", "uid_base must be at least 1000"),
        ("SANDLOT_UID_BASE", str(2**31 - 1), "past the largest uid"),
        ("SANDLOT_QUEUE_TIMEOUT", "-5", "queue_timeout must be more than 0"),
        ("SANDLOT_WARM_PYTHON", "maybe", "warm_python must be true or false"),
        ("SANDLOT_LOG_FORMAT", "xml", "log_format must be one of auto, json, text"),
        ("SANDLOT_SHUTDOWN_GRACE", "1e9", "shutdown_grace must be at most 3600"),
        ("SANDLOT_SLOT_CPUS", "0;x", "slot_cpus='0;x': 'x' is not a CPU number or range"),
        ("SANDLOT_SLOT_CPUS", "3-1", "slot_cpus='3-1': '3-1' is not a range of CPUs 0-8191"),
        ("SANDLOT_SLOT_CPUS", "0;;1", "slot_cpus='0;;1': '' is not a CPU number or range"),
        ("SANDLOT_SLOT_CPUS", "", "slot_cpus='': '' is not a CPU number or range"),
        ("SANDLOT_SLOT_CPUS", "-1", "slot_cpus='-1': '-1' is not a CPU number or range"),
        ("SANDLOT_SLOT_CPUS", "0-99999999999", "'0-99999999999' is not a range of CPUs 0-8191"),
        ("SANDLOT_SLOT_CPUS", "nan", "slot_cpus='nan': 'nan' is not a CPU number or range"),
        (
            "SANDLOT_SLOT",
            "4",
            "unknown environment variable SANDLOT_SLOT: did you mean SANDLOT_SLOTS",
        ),
        ("SANDLOT_API_KEY_FILE", "/k", "did you mean SANDLOT_API_KEYS_FILE"),
        ("SANDLOT_FORWARDED_ALLOW_IPS", "nginx", "'nginx' is not an IP address or network"),
        ("SANDLOT_FORWARDED_ALLOW_IPS", "10.0.0.1/8", "'10.0.0.1/8' is not an IP address"),
        ("SANDLOT_FORWARDED_ALLOW_IPS", "127.0.0.1,[::1]", "'[::1]' is not an IP address"),
    ],
)
def test_a_bad_setting_is_refused_with_what_is_wrong(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SandlotError) as caught:
        Config.load()
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("slots = true", "slots must be a whole number"),  # TOML's bool is no number
        ("slot = 3", "unknown setting 'slot' in"),
        ("host = [1]", "host must be text"),
        ("memory_mb = 2.5", "memory_mb must be a whole number"),
    ],
)
def test_a_bad_config_file_is_refused(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "sandlot.toml"
    path.write_text(toml + "\n")
    with pytest.raises(SandlotError) as caught:
        Config.load(path)
    assert message in str(caught.value)


def test_a_slot_uid_that_a_user_has_is_refused() -> None:
    nobody = pwd.getpwnam("nobody").pw_uid
    cfg = Config.load(uid_base=nobody - 1, slots=2)
    with pytest.raises(SandlotError) as caught:
        check_serving(cfg, frozenset())
    assert f"uid {nobody} (slot 1) belongs to the user 'nobody'" in str(caught.value)


def test_the_variables_the_code_reads_are_the_ones_it_knows() -> None:
    """Every SANDLOT_* name in the code is a setting's variable or a listed one, and every
    listed one is read somewhere, so `sandlot config` shows exactly what sandlot reads."""
    known = {s.env for s in SETTINGS} | set(VARIABLES)
    # Set inside a box for its programs (the Rust crates' directory, where a repository's tests
    # leave their reports); never read by sandlot.
    box_only = {"SANDLOT_RUST_CRATES", "SANDLOT_REPORT_DIR"}
    source = "\n".join(p.read_text() for p in (ROOT / "sandlot").rglob("*.py"))
    # `__SANDLOT_..__` placeholders in program templates are not variables.
    named = set(re.findall(r"(?<!_)SANDLOT_[A-Z_]*[A-Z]", source)) - box_only
    settings_env = {s.env for s in SETTINGS}
    assert named - known == set()
    assert set(VARIABLES) - named == set()
    assert settings_env <= known


def test_sandlot_config_lists_every_variable_and_hides_the_keys() -> None:
    key = "secret-" + "d4" * 12
    env = {"PATH": os.environ["PATH"], "COLUMNS": "250", "SANDLOT_API_KEYS": key}
    done = subprocess.run([sys.executable, "-m", "sandlot", "config"], cwd=ROOT, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert key not in done.stdout and "(set)" in done.stdout
    for name in [*(s.env for s in SETTINGS), *VARIABLES]:
        assert name in done.stdout
