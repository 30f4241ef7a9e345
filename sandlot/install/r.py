"""R: the site profile the R row starts from in place of attaching R's default packages.

Rscript attaches datasets, utils, grDevices, graphics, stats and methods at every start: ~100 ms
of a hello world's ~120 ms of CPU here, most of it spent on packages a short program never
touches. The row runs Rscript with none attached (R_DEFAULT_PACKAGES=NULL) and this file as its
site profile (R_PROFILE). It first does what Debian's site profile does, then puts a promise for
every object those packages export in R's Autoloads environment (which sits, as at a default
start, between them and base on the search path): the first use of `median` attaches stats,
without a message about masked objects, as R's start would have attached it. The export lists
are written out once here; when R or one of the packages changed since, the packages are
attached at the start, as R does.
"""

from __future__ import annotations

from pathlib import Path

from sandlot.install.files import install_text
from sandlot.install.process import PATH, run
from sandlot.install.step import Setup, SetupError
from sandlot.languages import R_BOOT

# Run by the host's Rscript, with its default packages attached: what the boot file lists.
# - The packages in search order (the winner of a name first), each with the objects it exports
#   (all names: methods' class tables too), a name kept only by the first package that has it.
# - Stamps: each package's DESCRIPTION (rewritten by any upgrade) and its mtime.
LIST_PACKAGES = r"""
attached <- rev(intersect(rev(sub("^package:", "", search())), getOption("defaultPackages")))
seen <- character()
exports <- list()
for (p in attached) {
  names <- setdiff(ls(paste0("package:", p), all.names = TRUE), seen)
  seen <- c(seen, names)
  exports[[p]] <- names
}
descriptions <- file.path(find.package(attached), "DESCRIPTION")
stamps <- setNames(sprintf("%.6f", file.mtime(descriptions)), descriptions)
literal <- function(x) paste(deparse(x, width.cutoff = 500L), collapse = "")
lines <- c(literal(R.version.string), literal(getOption("defaultPackages")), literal(exports),
           literal(stamps), length(seen))
cat(lines, sep = "\n")
"""

BOOT = """\
# Written by `sandlot setup` (sandlot/install/r.py) for {version}.
# The R row runs Rscript with no default package attached (R_DEFAULT_PACKAGES=NULL) and this file
# as its site profile (R_PROFILE): each package R would have attached at the start is attached
# when a program first uses one of its objects. When R or a package changed since this file was
# written, they are attached at the start instead.
# Debian's site profile first, where R would have run it.
if (file.exists(file.path(R.home("etc"), "Rprofile.site")))
  sys.source(file.path(R.home("etc"), "Rprofile.site"), envir = environment())
# Everything else in an environment of its own over base: no name a program defines is seen.
local(envir = new.env(parent = baseenv()), {{
  stamps <- {stamps}
  current <- identical(R.version.string, {version}) &&
    identical(vapply(names(stamps), function(p) sprintf("%.6f", file.mtime(p)), ""), stamps)
  if (!current) {{
    options(defaultPackages = {defaults})
    if (exists(".OptRequireMethods")) .OptRequireMethods()  # methods first, as R does
    return(invisible())
  }}
  attach_for <- function(name, package) {{
    library(package, character.only = TRUE, warn.conflicts = FALSE)
    get(name, envir = as.environment(paste0("package:", package)), inherits = FALSE)
  }}
  here <- environment()
  exports <- {exports}
  for (package in names(exports)) for (name in exports[[package]])
    do.call(delayedAssign, list(name, call("attach_for", name, package), here, .AutoloadEnv))
}})
"""


def ensure_r_boot(setup: Setup) -> str:
    """Write the R row's boot file from the host's R and its default packages, unless current."""
    target = Path(R_BOOT.format(runtime=setup.runtime))
    env = {"PATH": PATH, "HOME": "/nonexistent", "LANG": "C.UTF-8"}
    lines = run(["/usr/bin/Rscript", "-e", LIST_PACKAGES], env=env).splitlines()
    if len(lines) < 5 or not lines[-1].isdigit():
        raise SetupError(f"R's default packages could not be listed: {lines[-5:]}")
    version, defaults, exports, stamps, count = lines[-5:]
    text = BOOT.format(version=version, defaults=defaults, exports=exports, stamps=stamps)
    if not install_text(setup, target, text):
        return "ok (already present)"
    return f"wrote {target} ({count} objects of {defaults})"
