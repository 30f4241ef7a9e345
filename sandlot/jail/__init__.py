"""jail — runs one argv in a fresh isolated box and says how it ended.

Knows nothing of languages (never imports sandlot.languages or anything above it).
"""

from sandlot.jail.pool import Jail, JailConfig
from sandlot.jail.spec import Limit, Limits, Outcome, RunSpec

__all__ = ["Jail", "JailConfig", "Limit", "Limits", "Outcome", "RunSpec"]
