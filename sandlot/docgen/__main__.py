"""python -m sandlot.docgen [--check]: see the package's docstring."""

from __future__ import annotations

import argparse
import sys

from sandlot.docgen import DOCS, blocks, rewrite, stale


def main() -> None:
    parser = argparse.ArgumentParser(description="Rewrite (or check) the docs' generated blocks.")
    parser.add_argument("--check", action="store_true", help="only name the stale blocks")
    args = parser.parse_args()
    if args.check:
        found = stale()
        for entry in found:
            print(f"stale: docs/{entry} (make docs rewrites it)")
        sys.exit(1 if found else 0)
    for b in blocks():
        if rewrite(DOCS / b.page, b.name, b.render()):
            print(f"rewrote docs/{b.page}: {b.name}")


main()
