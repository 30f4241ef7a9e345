"""Rows whose toolchain `sandlot setup` cannot install: known names, with the reason and the way
in (`unavailable`). Julia, Swift and Lean 4 are not installable from Debian, PyPI or npm (an
operator unpacks one into the runtime dir); CUDA and a GPU Python need an NVIDIA GPU.
"""

from __future__ import annotations

from sandlot.languages.registry import Language

GPU_MISSING = (
    "not available on this server: it needs an NVIDIA GPU, which this machine does not have and "
    "sandlot's jail does not pass through; send {what} requests to a SandboxFusion GPU pod"
)


def not_packaged(what: str, where: str) -> str:
    return (
        f"not installed on this server: {what} is not packaged for Debian 12 nor on PyPI or npm, "
        f"so `sandlot setup` cannot install it; an operator who has a {what} toolchain unpacks "
        f"it into {where} and restarts the server"
    )


ROWS: tuple[Language, ...] = (
    Language(
        name="julia",
        source="main.jl",
        run=("{runtime}/julia/bin/julia", "--startup-file=no", "{src}"),
        version=("{runtime}/julia/bin/julia", "--version"),
        binds=("{runtime}/julia",),
        requires=("{runtime}/julia/bin/julia",),
        unavailable=not_packaged("Julia", "/opt/sandlot/julia (bin/julia)"),
        summary="Julia: not installable here (no Debian 12, PyPI or npm package)",
    ),
    Language(
        name="swift",
        source="main.swift",
        compile=("{runtime}/swift/usr/bin/swiftc", "-O", "-o", "main", "{src}"),
        artifacts=("main",),
        run=("./main",),
        version=("{runtime}/swift/usr/bin/swiftc", "--version"),
        binds=("{runtime}/swift",),
        requires=("{runtime}/swift/usr/bin/swiftc",),
        unavailable=not_packaged("Swift", "/opt/sandlot/swift (usr/bin/swiftc)"),
        summary="Swift: not installable here (no Debian 12, PyPI or npm package)",
    ),
    Language(
        name="lean",
        source="Main.lean",
        run=("{runtime}/lean/bin/lean", "{src}"),
        version=("{runtime}/lean/bin/lean", "--version"),
        binds=("{runtime}/lean",),
        requires=("{runtime}/lean/bin/lean",),
        unavailable=not_packaged("Lean 4", "/opt/sandlot/lean (bin/lean)"),
        summary="Lean 4: not installable here (no Debian 12, PyPI or npm package)",
    ),
    Language(
        name="cuda",
        source="main.cu",
        compile=("/usr/local/cuda/bin/nvcc", "-O2", "-o", "main", "{src}"),
        artifacts=("main",),
        run=("./main",),
        requires=("/usr/local/cuda/bin/nvcc", "/dev/nvidiactl"),
        unavailable=GPU_MISSING.format(what="cuda"),
        summary="CUDA C++ by nvcc: needs an NVIDIA GPU",
    ),
    Language(
        name="python_gpu",
        source="main.py",
        run=("{runtime}/python-gpu/bin/python3", "{src}"),
        requires=("{runtime}/python-gpu/bin/python3", "/dev/nvidiactl"),
        unavailable=GPU_MISSING.format(what="python_gpu"),
        summary="Python with a GPU runtime: needs an NVIDIA GPU",
    ),
)
