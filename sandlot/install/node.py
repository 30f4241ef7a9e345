"""Node: the rows' npm packages in one node_modules, and jest's settings and reporter beside it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sandlot.install.files import (
    fresh_dir,
    prepare_runtime,
    read_stamp,
    replace_dir,
    stamp_matches,
    write_stamp,
)
from sandlot.install.process import PATH, as_nobody, host_env, run
from sandlot.install.step import Setup

NODE_DIR = "node"  # under the runtime dir: one node_modules for every row's npm packages
# jest's settings for the sandbox: tests in the run's cwd, TypeScript through babel, modules
# from the runtime's node_modules, its cache in the box's /tmp.
JEST_CONFIG = """\
// Written by `sandlot setup`.
const path = require("path");
const here = (name) => require.resolve(name, { paths: [__dirname] });
module.exports = {
  rootDir: process.cwd(),
  testEnvironment: "node",
  testMatch: ["**/*.test.[jt]s?(x)", "**/*.spec.[jt]s?(x)"],
  transform: {
    "\\\\.[jt]sx?$": [
      here("babel-jest"),
      {
        babelrc: false,
        configFile: false,
        presets: [
          [here("@babel/preset-env"), { targets: { node: "current" } }],
          here("@babel/preset-typescript"),
        ],
      },
    ],
  },
  modulePaths: [path.join(__dirname, "node_modules")],
  cacheDirectory: "/tmp/jest-cache",
  watchman: false,
  testResultsProcessor: path.join(__dirname, "jest-report.js"),
};
"""
# jest's aggregated results, as SandboxFusion's jest-json-reporter writes them to
# jest-report.json in the run's cwd (`testResults[].testFilePath` and `.testResults[]`, the shape
# its clients parse; jest's own --json report has another). Written at once: jest may exit before
# an asynchronous write ends.
JEST_REPORTER = """\
// Written by `sandlot setup`.
const fs = require("fs");
module.exports = (results) => {
  fs.writeFileSync("jest-report.json", JSON.stringify(results));
  return results;
};
"""
# Files of ours beside node_modules, kept current on every run of setup (the stamp covers only
# the npm packages).
NODE_FILES = {"jest.config.js": JEST_CONFIG, "jest-report.js": JEST_REPORTER}


def ensure_npm(setup: Setup) -> str:
    """The rows' npm packages, in one node_modules under the runtime dir.

    Packages installed for rows chosen earlier stay: the stamp lists every package, and a later
    `--languages` choice installs the union.
    """
    target = setup.runtime / NODE_DIR
    before = read_stamp(target)
    wanted = sorted(set(before) | {pkg for row in setup.rows for pkg in row.npm})
    spec = "".join(f"{pkg}\n" for pkg in wanted)
    if stamp_matches(target, spec) and (target / "node_modules").is_dir():
        return "ok (already present)" + write_node_files(target)
    setup.log(f"npm packages: installing {' '.join(wanted)} into {target} ...")
    prepare_runtime(setup)
    if shutil.which("npm", path=PATH) is None:  # Debian's nodejs comes without npm
        run(["apt-get", "install", "-y", "--no-install-recommends", "npm"],
            env=host_env(DEBIAN_FRONTEND="noninteractive"))  # fmt: skip
    new = fresh_dir(setup.runtime / f".{NODE_DIR}.new")
    (new / "package.json").write_text('{"private": true}\n')
    # No install scripts: nothing a package ships runs as root here; esbuild (tsx) and the
    # others need none (esbuild's binary comes in its platform package).
    run(["npm", "install", "--no-audit", "--no-fund", "--no-update-notifier", "--ignore-scripts",
         "--omit=dev", *wanted], env=host_env(PATH=PATH), cwd=str(new))  # fmt: skip
    write_node_files(new)
    replace_dir(new, target)  # node_modules holds no absolute paths: it can move
    names = [pkg.rsplit("@", 1)[0] for pkg in wanted]
    check = "".join(f"require.resolve({name + '/package.json'!r});" for name in names)
    env = {"PATH": PATH, "HOME": "/nonexistent"}
    run(as_nobody(["node", "-e", check]), env=env, cwd=str(target))
    write_stamp(target, spec)
    return f"installed {' '.join(wanted)} into {target}"


def write_node_files(target: Path) -> str:
    """NODE_FILES in `target`, each replaced (atomically) only when it differs."""
    changed = []
    for name, text in NODE_FILES.items():
        path = target / name
        if not path.exists() or path.read_text() != text:
            new = path.with_name(f".{name}.new")
            new.write_text(text)
            os.chmod(new, 0o644)
            os.replace(new, path)
            changed.append(name)
    return f"; updated {' '.join(changed)}" if changed else ""
