"""The hardware description row: SystemVerilog compiled by Icarus Verilog, run by its simulator."""

from __future__ import annotations

from sandlot.languages.registry import Language

ROWS: tuple[Language, ...] = (
    Language(
        name="verilog",
        aliases=("systemverilog", "sv", "iverilog"),
        source="main.sv",
        compile=(
            "/usr/bin/iverilog",
            "-Wall",
            "-Winfloop",
            "-Wno-timescale",
            "-g2012",
            "-s",
            "tb",
            "-o",
            "main.vvp",
            "{src}",
        ),
        artifacts=("main.vvp",),
        run=("/usr/bin/vvp", "-n", "main.vvp"),
        version=("/usr/bin/iverilog", "-V"),
        requires=("/usr/bin/iverilog", "/usr/bin/vvp"),
        apt=("iverilog",),
        summary="Icarus Verilog (SystemVerilog 2012); the top module must be `tb`",
    ),
)
