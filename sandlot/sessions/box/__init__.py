"""Code that runs inside a session's box, on the sandbox runtime's Python: the standard library
and pyzmq only. It never imports sandlot (the box does not have it); the server imports
`frames` from here, so both sides speak one framing.
"""
