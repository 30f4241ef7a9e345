"""Ruby: the boot file the ruby row starts with in place of RubyGems.

A plain `ruby` loads RubyGems at every start (about 40 files parsed: ~45 ms of a hello world's
~55 ms of CPU here) so that a `require` can find a gem's files. The row runs `ruby --disable-gems
-r<boot file>` instead, and the boot file gives a program what RubyGems would have, as
`bundle install --standalone` does for an application: the load paths of the gems a box can see,
written out once here, with `Gem` and `Kernel#gem` loading RubyGems itself when a program first
uses them. did_you_mean and error_highlight, which RubyGems' start would have loaded, are loaded
by the boot file, so a program's error messages are the same.
"""

from __future__ import annotations

import json
from pathlib import Path

from sandlot.install.files import install_text
from sandlot.install.process import PATH, run
from sandlot.install.step import Setup, SetupError
from sandlot.languages import RUBY_BOOT

# Run by the host's Ruby, with RubyGems: what the boot file lists, as Ruby literals.
# - Only gem dirs under /usr, the one tree of the host's a box sees (/var/lib/gems is not in it).
# - A gem's newest version, as a `require` activates it. A gem that is also a default gem (one
#   whose files Ruby's own library dir already holds) goes first, as RubyGems then prefers the
#   installed newer version; every other gem after Ruby's library dirs: RubyGems looks a
#   `require` up in them first and activates a gem only when they do not have it.
# - Stamps: each gem dir's specifications dir and its mtime (nil when absent). Installing or
#   removing a gem, or upgrading Ruby, changes one; the boot file then loads RubyGems instead.
LIST_GEMS = r"""
dirs = Gem.path.select { |dir| dir.start_with?("/usr/") }
defaults = Gem::Specification.select(&:default_gem?).map(&:name)
front, back = [], []
Gem::Specification.latest_specs(true).each do |spec|
  next if spec.default_gem? || !dirs.include?(spec.base_dir)
  paths = spec.full_require_paths.select { |path| File.directory?(path) }
  (defaults.include?(spec.name) ? front : back).concat(paths)
end
mtime = ->(dir) { t = File.mtime(dir) rescue nil; t && [t.tv_sec, t.tv_nsec] }
stamps = dirs.map { |dir| File.join(dir, "specifications") }.map { |dir| [dir, mtime.(dir)] }
require "json"
puts JSON.generate(ruby: RUBY_DESCRIPTION, front: front.uniq.inspect, back: back.uniq.inspect,
                   stamps: stamps.inspect, count: (front + back).uniq.size)
"""

BOOT = """\
# Written by `sandlot setup` (sandlot/install/ruby.py) for {ruby}.
# The ruby row runs `ruby --disable-gems -r<this file>`: it gives a program what RubyGems would
# have, without loading RubyGems. When a gem dir changed since it was written, RubyGems is loaded.
stamps = {stamps}
mtime = ->(dir) {{ t = File.mtime(dir) rescue nil; t && [t.tv_sec, t.tv_nsec] }}
if stamps.all? {{ |dir, stamp| mtime.(dir) == stamp }}
  $LOAD_PATH.unshift(*{front})
  $LOAD_PATH.push(*{back})
  autoload :Gem, "rubygems"
  module Kernel
    private def gem(...) = (require "rubygems"; gem(...)) # RubyGems' own replaces this one
  end
else
  require "rubygems"
end
require "error_highlight"
require "did_you_mean"
"""


def ensure_ruby_boot(setup: Setup) -> str:
    """Write the ruby row's boot file from the host's Ruby and gems, unless it is current."""
    target = Path(RUBY_BOOT.format(runtime=setup.runtime))
    try:
        listed = json.loads(run(["/usr/bin/ruby", "-e", LIST_GEMS],
                                env={"PATH": PATH, "HOME": "/nonexistent"}))  # fmt: skip
        text = BOOT.format(**listed)
    except (ValueError, KeyError) as exc:
        raise SetupError(f"Ruby's gem list could not be read: {exc}") from exc
    if not install_text(setup, target, text):
        return "ok (already present)"
    return f"wrote {target} ({listed['count']} gem load paths)"
