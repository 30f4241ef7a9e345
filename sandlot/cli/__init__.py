"""cli — the command line: thin commands over the Service, the client and the installer.

Each module holds commands as plain functions and imports only `common`; this file alone builds
the typer app from them, so no command module imports another.
"""

import typer

from sandlot.cli import coder, engine, evaluate, mcp, repos

app = typer.Typer(help="sandlot: run untrusted code in isolated boxes.", no_args_is_help=True)
app.command()(engine.serve)
app.command()(engine.run)
app.command()(engine.languages)
app.command()(engine.setup)
app.command("config")(engine.show_config)
packages = typer.Typer(help="The package sets setup fetches from language registries: their locks.")
packages.command("lock")(engine.packages_lock)
packages.command("check")(engine.packages_check)
app.add_typer(packages, name="packages")
app.command("route")(coder.route_cmd)
app.command("test")(coder.test_cmd)
app.command("code")(coder.code_cmd)
app.command("eval")(evaluate.eval_command)
app.command("mcp")(mcp.mcp_cmd)
app.command("grade")(repos.grade_cmd)
env = typer.Typer(help="Cached environments of repository tasks.", no_args_is_help=True)
env.command("list")(repos.env_list)
env.command("rm")(repos.env_rm)
app.add_typer(env, name="env")

__all__ = ["app"]
