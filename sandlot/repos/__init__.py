"""repos — repository tasks in phases: setup (dependencies, through the egress proxy), work (no
network) and grade (no network, tests restored from the base, history up to the base).
"""
