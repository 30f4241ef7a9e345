"""Rows run straight from their source by an interpreter, with no compile step: Python (and
pytest), bash, PHP, Ruby, Perl, Lua, R, Racket and SQLite.
"""

from __future__ import annotations

from sandlot.languages.native import CRATES, RUST_BIN, RUST_CRATES_DIR, RUST_ENV, RUST_TOOLCHAIN
from sandlot.languages.registry import Language

PY = "{runtime}/python/bin/python3"
# Ruby starts without RubyGems, whose loading is most of a short run's CPU (~45 of a hello
# world's ~55 ms), from a boot file `sandlot setup` writes (install/ruby.py) that gives a program
# what RubyGems would have: its gems' load paths, `Gem`, `gem`, did_you_mean, error_highlight.
RUBY_DIR = "{runtime}/ruby"
RUBY_BOOT = f"{RUBY_DIR}/boot.rb"
# R starts with no default package attached (attaching stats, methods and the rest is ~100 of a
# hello world's ~120 ms), from a site profile `sandlot setup` writes (install/r.py) that attaches
# each when a program first uses one of its objects, as R's own autoload does.
R_DIR = "{runtime}/R"
R_BOOT = f"{R_DIR}/boot.R"

ROWS: tuple[Language, ...] = (
    Language(
        name="python",
        aliases=("py", "python3"),
        source="main.py",
        run=(PY, "{src}"),
        version=(PY, "--version"),
        binds=("{runtime}/python", "/etc/fonts"),  # fontconfig's, for matplotlib's fonts
        requires=(PY,),
        env={"PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"},
        harness="python",
        warm=True,
        summary="CPython with numpy, pandas, scipy, sympy, pytest, requests, bs4, lxml, "
        "matplotlib, seaborn, pillow, cryptography, sortedcontainers and networkx (pinned: "
        "install/python.py)",
    ),
    Language(
        name="pytest",
        source="test_main.py",
        run=(PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "{src}"),
        guard="pytest",
        version=(PY, "-m", "pytest", "--version"),
        binds=("{runtime}/python",),
        requires=(PY,),
        env={"PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1"},
        summary="pytest on the code; passes when every test passes",
    ),
    Language(
        name="bash",
        aliases=("sh", "shell"),
        source="main.sh",
        run=("/bin/bash", "{src}"),
        version=("/bin/bash", "--version"),
        # Scripts that build a Rust crate with rustc (aider's exercises) find the rust row's
        # crates in $SANDLOT_RUST_CRATES.
        # The rust row's toolchain first on PATH (rustc, cargo), and its cargo settings: a
        # script may build a Cargo project offline from the crate set.
        binds=(RUST_TOOLCHAIN, CRATES),
        env={
            "SANDLOT_RUST_CRATES": RUST_CRATES_DIR,
            "PATH": f"{RUST_BIN}:/usr/bin:/bin",
            **RUST_ENV,
        },
        requires=("/bin/bash",),
        apt=("bash", "bc"),
        summary="GNU bash, with bc",
    ),
    Language(
        name="php",
        source="main.php",
        run=("/usr/bin/php", "-f", "{src}"),
        version=("/usr/bin/php", "--version"),
        binds=("/etc/php",),
        requires=("/usr/bin/php",),
        apt=("php-cli",),
        prefix="<?php\n",
        summary="PHP CLI; `<?php` is added when the code does not start with it",
    ),
    Language(
        name="ruby",
        aliases=("rb",),
        source="main.rb",
        run=("/usr/bin/ruby", "--disable-gems", f"-r{RUBY_BOOT}", "{src}"),
        version=("/usr/bin/ruby", "--version"),
        binds=(RUBY_DIR,),
        requires=("/usr/bin/ruby", RUBY_BOOT),
        apt=("ruby",),
        summary="Ruby (CRuby) with its bundled gems (test-unit, minitest, prime, matrix, rexml, "
        "...)",
    ),
    Language(
        name="perl",
        aliases=("pl",),
        source="main.pl",
        run=("/usr/bin/perl", "{src}"),
        # SIGTERM (a time limit's first word) exits, flushing STDOUT, where by default it kills
        # with the buffer unwritten; `use 5` makes -M take the statement, at no cost.
        env={"PERL5OPT": "-M5;$SIG{{TERM}}=sub{{exit(143)}}"},  # {{ }}: the env is a template
        version=("/usr/bin/perl", "-e", "print qq(perl $^V\n)"),
        requires=("/usr/bin/perl",),
        apt=("perl", "libtest-deep-perl", "libdata-compare-perl"),
        summary="Perl 5 with Test::More, Test::Deep and Data::Compare",
    ),
    Language(
        name="lua",
        source="main.lua",
        run=("/usr/bin/lua5.4", "{src}"),
        version=("/usr/bin/lua5.4", "-v"),
        requires=("/usr/bin/lua5.4",),
        apt=("lua5.4", "lua-unit"),
        summary="Lua 5.4 with luaunit",
    ),
    Language(
        name="R",
        aliases=("rscript",),
        source="main.R",
        suffixes=(".r",),
        run=("/usr/bin/Rscript", "{src}"),
        version=("/usr/bin/Rscript", "--version"),
        binds=("/etc/R", R_DIR),
        env={"R_DEFAULT_PACKAGES": "NULL", "R_PROFILE": R_BOOT},
        requires=("/usr/bin/Rscript", R_BOOT),
        apt=("r-base-core",),
        summary=(
            "R's Rscript; default packages attached at first use; the name is case-sensitive,"
            " as SandboxFusion's"
        ),
    ),
    Language(
        name="racket",
        aliases=("rkt",),
        source="main.rkt",
        run=("/usr/bin/racket", "{src}"),
        version=("/usr/bin/racket", "--version"),
        binds=("/etc/racket",),
        requires=("/usr/bin/racket",),
        apt=("racket",),
        summary="Racket CS; `#lang racket` programs",
    ),
    Language(
        name="sql",
        aliases=("sqlite",),
        source="main.sql",
        # A fresh in-memory database; `files` may bring database files to ATTACH.
        run=("/usr/bin/sqlite3", "-bail", "-batch", ":memory:", ".read {src}"),
        version=("/usr/bin/sqlite3", "--version"),
        requires=("/usr/bin/sqlite3",),
        apt=("sqlite3",),
        summary="SQLite: the statements run on an in-memory database, results printed",
    ),
)
