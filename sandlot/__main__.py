from sandlot.cli import app

app(prog_name="sandlot")
