"""jail — runs one argv in a fresh isolated box and says how it ended.

Knows nothing of languages (never imports sandlot.languages or anything above it).
"""

from sandlot.jail.box_init import build_box_init
from sandlot.jail.bwrap import BOX_WORKDIR, hidden_in_a_box
from sandlot.jail.layers import MAX_LAYERS, Frozen, LayerBusy, copy_layer
from sandlot.jail.live import LiveBox, LiveBoxes, LiveConfig, Pipes
from sandlot.jail.placement import (
    allowed_cpus,
    describe_cpu_sets,
    parse_cpu_sets,
    resolve_cpu_sets,
)
from sandlot.jail.pool import Jail, JailConfig
from sandlot.jail.spec import Limit, Limits, Outcome, RunSpec
from sandlot.jail.workdir import mount_tmpfs, safe_relpath, unmount_all

__all__ = [
    "BOX_WORKDIR",
    "MAX_LAYERS",
    "Frozen",
    "Jail",
    "JailConfig",
    "LayerBusy",
    "Limit",
    "Limits",
    "LiveBox",
    "LiveBoxes",
    "LiveConfig",
    "Outcome",
    "Pipes",
    "RunSpec",
    "allowed_cpus",
    "build_box_init",
    "copy_layer",
    "describe_cpu_sets",
    "hidden_in_a_box",
    "mount_tmpfs",
    "parse_cpu_sets",
    "resolve_cpu_sets",
    "safe_relpath",
    "unmount_all",
]
