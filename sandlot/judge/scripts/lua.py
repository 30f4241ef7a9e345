"""Lua: one chunk, the harness's local first, then the answer, then the tests.

The answer stays in the tests' chunk: MultiPL-E's prompts declare the function `local`, which
another chunk could not see. Lua runs no code while it compiles, so the harness's first statement
runs before any of the answer's; its table is a local of the chunk under the drawn name, which
the answer cannot name. A long comment or string the answer leaves open swallows the tests and
their seal, or breaks the chunk.

The tests assert with luaunit's `lu.assertEquals(actual, expected)` and run with
`os.exit(lu.LuaUnit.run())`. Each assertion becomes the harness's `eq(site, ...)`, which calls
an assertEquals of the harness's own luaunit, loaded before the answer ran over a copy of the
global environment (an answer that replaces `lu.assertEquals`, or a global luaunit uses, changes
nothing it checks), and marks its site when it holds; the runner's exit becomes the harness's
`done`, which writes the seal when the runner reports no failure.
"""

from __future__ import annotations

import re

from sandlot.judge.scripts import SEAL, Joined, fresh_name, lex

_LEXEMES = lex.lexemes(
    r"--\[(=*)\[[\s\S]*?\]\1\]", r"--[^\n]*", r"\[(=*)\[[\s\S]*?\]\2\]", lex.SINGLE, lex.DOUBLE
)

_START = """local {v} = (function()
  local f = io.open('{seal}', 'rb')
  local s = f and f:read('a') or ''
  if f then f:close() end
  os.remove('{seal}')
  os.remove(arg[0])
  local out, write, flush = io.stdout, io.stdout.write, io.stdout.flush
  local exit, tostring = os.exit, tostring
  local lu{luaunit}
  local passed, n, t = {{}}, 0, {{}}
  function t.eq(site, ...)
    lu.assertEquals(...)
    if not passed[site] then passed[site] = true; n = n + 1 end
  end
  function t.done(failures)
    if failures == 0 then
      write(out, s .. 'passed=' .. tostring(n) .. ' failed=0' .. s .. '\\n')
      flush(out)
    end
    exit(failures)
  end
  return t
end)()
"""
# luaunit loaded from its file over a copy of the globals (and of their library tables).
_LUAUNIT = """
  do
    local env = {}
    for k, x in pairs(_G) do
      if type(x) == 'table' and x ~= _G then
        local copy = {}
        for k2, y in pairs(x) do copy[k2] = y end
        env[k] = copy
      else
        env[k] = x
      end
    end
    env._G = env
    lu = assert(loadfile(assert(package.searchpath('luaunit', package.path)), 't', env))()
  end"""
_RUN = re.compile(r"os\.exit\(\s*lu\.LuaUnit\.run\(\s*\)\s*\)\s*$")


def sites(tests: str, v: str) -> tuple[str, int | None]:
    blanked = _LEXEMES.blank(tests)
    spans = lex.calls(blanked, ("lu.assertEquals",), before=r"(?<![\w.:])")
    others = len(re.findall(r"\blu\s*\.\s*assert", blanked)) - len(spans)

    def wrap(call: str, k: int) -> str:
        return f"{v}.eq({k}, {call[call.index('(') + 1 :]}"

    out = lex.replaced(tests, spans, wrap)
    return (tests, None) if out is None or others or not spans else (out, len(spans))


def join(answer: str, tests: str) -> Joined:
    v = fresh_name()
    body, count = sites(tests, v)
    body = body.rstrip()
    if _RUN.search(body):
        body = _RUN.sub(f"{v}.done(lu.LuaUnit.run())", body)
    else:
        body = f"{body}\n{v}.done(0)"
    start = _START.format(v=v, seal=SEAL, luaunit=_LUAUNIT if "luaunit" in tests else "")
    return Joined(f"{start}{answer}\n{body}\n", {}, count)
