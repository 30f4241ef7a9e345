"""Entry point of a slot's spawner process (started by the jail, never by hand)."""

from sandlot.jail.spawner import main

main()
