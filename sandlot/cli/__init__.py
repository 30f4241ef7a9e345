"""cli — the command line: thin commands over the Service, the client and the installer.

Each module holds commands as plain functions and imports only `common`; this file alone builds
the typer app from them, so no command module imports another.
"""

import typer

from sandlot.cli import coder, engine, evaluate, mcp, repos

app = typer.Typer(
    help="sandlot: run untrusted code in isolated boxes.",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: no `<bool>` after every flag, whole lines when piped
)
# short_help: the line `sandlot --help` gives each, which click cuts at about 55 characters.
app.command(short_help="Start the HTTP server.")(engine.serve)
app.command(short_help="Run a file in a box on this machine (no server).")(engine.run)
app.command(short_help="List the languages, with their versions.")(engine.languages)
app.command(short_help="Install what is missing: toolchains, runtimes.")(engine.setup)
app.command("config", short_help="Show every setting and its variable.")(engine.show_config)
packages = typer.Typer(
    help="The package sets setup fetches from language registries: their locks.",
    rich_markup_mode=None,
)
packages.command("lock", short_help="Rewrite the locks from the registries.")(engine.packages_lock)
packages.command("check", short_help="Check the installed sets against their locks.")(
    engine.packages_check
)
app.add_typer(packages, name="packages", short_help="The package sets' locks: lock, check.")
app.command("route", short_help="Say which tool serves a request, and why.")(coder.route_cmd)
app.command("test", short_help="Run a repository's tests in the sandbox.")(coder.test_cmd)
app.command("code", short_help="Edit with Aider; prove it with the tests.")(coder.code_cmd)
app.command("eval", short_help="Judge a file of samples; print pass@k.")(evaluate.eval_command)
app.command("datasets", short_help="List the datasets, with their aliases.")(
    evaluate.datasets_command
)
app.command("mcp", short_help="Serve sandlot's tools over MCP on stdio.")(mcp.mcp_cmd)
app.command("grade", short_help="Grade a patch against a repository's tests.")(repos.grade_cmd)
env = typer.Typer(help="Cached environments of repository tasks.", no_args_is_help=True,
                  rich_markup_mode=None)  # fmt: skip
env.command("list", short_help="The cached environments, with their sizes.")(repos.env_list)
env.command("rm", short_help="Remove cached environments.")(repos.env_rm)
app.add_typer(env, name="env", short_help="Cached environments of repository tasks.")

__all__ = ["app"]
