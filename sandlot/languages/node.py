"""Rows run by Node.js: JavaScript, TypeScript (transpiled by esbuild) and jest's tests.

The npm packages `sandlot setup` installs into {runtime}/node are pinned here (`npm` of a row).
"""

from __future__ import annotations

from sandlot.languages.registry import Language

NODE_MODULES = "{runtime}/node/node_modules"
# npm modules programs may require (SandboxFusion's node_modules has them; MBXP's JavaScript
# and TypeScript tests use lodash), found through NODE_PATH.
NODE_PACKAGES = ("lodash@4.17.21",)
NODE_ENV = {"NODE_PATH": NODE_MODULES}
# Node keeps the hash seed its start-up snapshot was built with instead of drawing one and
# rehashing the snapshot's strings: ~20% of a hello world's CPU. The seed guards a process's
# hash tables against keys crafted to collide; a run's only inputs come from whoever sent it,
# and no script can observe the seed (property and Map orders do not depend on it).
NODE = ("/usr/bin/node", "--no-rehash-snapshot", "--max-old-space-size={heap_mb}")
ESBUILD_NPM = "esbuild@0.28.2"
# The native binary of esbuild's x86-64 Linux package (the package's own bin is a node shim).
ESBUILD = f"{NODE_MODULES}/@esbuild/linux-x64/bin/esbuild"
# A judge's TypeScript tests, transpiled beside the answer (`.ts` in, `.js` out) and joined to
# it by the driver's run step, so that each is transpiled on its own (sandlot/executor/guards).
TS_TESTS = "sandlot_tests"
JEST = ("jest@29.7.0", "babel-jest@29.7.0", "@babel/core@7.29.13", "@babel/preset-env@7.29.14",
        "@babel/preset-typescript@7.29.7")  # fmt: skip

ROWS: tuple[Language, ...] = (
    Language(
        name="nodejs",
        aliases=("javascript", "js", "node"),
        source="main.js",
        suffixes=(".mjs", ".cjs"),  # node reads either kind of module from main.js
        run=(*NODE, "{src}"),
        version=("/usr/bin/node", "--version"),
        binds=("{runtime}/node",),
        env=NODE_ENV,
        requires=("/usr/bin/node", f"{NODE_MODULES}/lodash"),
        apt=("nodejs",),
        npm=NODE_PACKAGES,
        harness="javascript",
        summary="Node.js, with lodash (as SandboxFusion's; MBXP's tests require it)",
    ),
    Language(
        name="typescript",
        aliases=("ts",),
        source="main.ts",
        suffixes=(".mts", ".cts"),
        # esbuild (the transpiler tsx runs) strips the types, as SandboxFusion's tsx does: no
        # type check. Transpiling in 20 ms as a compile step lets the compile cache keep the JS,
        # and the run is a plain node start instead of tsx's loader (~250 ms).
        compile=(
            "/bin/sh",
            "-c",
            f"exec {ESBUILD} {{src}} $(test -f {TS_TESTS}.ts && echo {TS_TESTS}.ts) --outdir=. "
            "--format=cjs --platform=node --target=node18 --log-level=warning",
        ),
        artifacts=("main.js", f"{TS_TESTS}.js"),
        run=(*NODE, "main.js"),
        harness="javascript",
        harness_program="main.js",
        version=(ESBUILD, "--version"),
        binds=("{runtime}/node",),
        env=NODE_ENV,
        requires=("/usr/bin/node", ESBUILD, f"{NODE_MODULES}/lodash"),
        apt=("nodejs",),
        npm=(ESBUILD_NPM, *NODE_PACKAGES),
        summary="TypeScript transpiled by esbuild (no type check, as tsx), run by Node",
    ),
    Language(
        name="jest",
        source="main.test.ts",
        run=(
            *NODE,
            f"{NODE_MODULES}/jest/bin/jest.js",
            "--config",
            "{runtime}/node/jest.config.js",
            "--ci",
            "--runInBand",
        ),
        guard="jest",
        version=("/usr/bin/node", f"{NODE_MODULES}/jest/bin/jest.js", "--version"),
        binds=("{runtime}/node",),
        env={"FORCE_COLOR": "0"},
        requires=("/usr/bin/node", f"{NODE_MODULES}/jest/bin/jest.js"),
        apt=("nodejs",),
        npm=JEST,
        summary="jest on TypeScript or JavaScript tests; jest-report.json holds the results in "
        "SandboxFusion's shape",
    ),
)
