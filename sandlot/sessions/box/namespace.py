"""What a snapshot keeps of a Python session's kernel: the user's names (by cloudpickle, which
copies functions and classes made in cells by value), the working directory, sys.path and
os.environ. Run inside the kernel, as code the agent sends (`call` in notebook.py): `save`
writes the state file in the work dir, which the snapshot's layer then holds, and `load` reads
it in the kernel of a new session and removes it. Each writes a JSON report for the agent.

What cannot be pickled (an open file, a socket, a generator, a thread, a lock, a database
connection...) is left out and named in the report with why; threads, subprocesses and open
descriptors are never copied: they belong to the kernel process, which a snapshot does not
keep. The server never reads the state file, only the report (as the box's word: untrusted).
"""

import contextlib
import gc
import json
import os
import pickle
import re
import sys

PROTOCOL = 5
# Names IPython binds itself: the output history (_, __, _1, _i1...) and what user_ns_hidden
# does not list for a session that rebound it.
IPYTHON = re.compile(r"_{1,3}|_i{1,3}|_i\d+|_\d+|_ih|_oh|_dh|In|Out|exit|quit|get_ipython")
MAX_REPORTED = 200  # names not copied, in the report
WHY_CHARS = 200


def _shell():
    from IPython import get_ipython

    return get_ipython()


def user_names(shell):
    """The names the user bound: not IPython's own (unless the user rebound one), no dunder."""
    hidden = shell.user_ns_hidden
    out = []
    for name, value in shell.user_ns.items():
        if (name.startswith("__") and name.endswith("__")) or IPYTHON.fullmatch(name):
            continue
        if name in hidden and hidden[name] is value:
            continue
        out.append(name)
    return out


def _describe(name, value, exc):
    why = f"{type(exc).__name__}: {exc}"
    return {"name": name, "type": type(value).__name__, "why": why[:WHY_CHARS]}


def reported(op, report, *args):
    """Do `op`, writing what it returns, or the error that stopped it, to `report`."""
    try:
        content = op(*args)
    except Exception as exc:
        content = {"error": f"{type(exc).__name__}: {exc}"[: WHY_CHARS * 5]}
    with open(report, "w") as f:
        json.dump(content, f)


def save(path):
    """Write the kernel's state to `path`; what was kept and what was not."""
    import cloudpickle

    shell = _shell()
    values = {name: shell.user_ns[name] for name in user_names(shell)}
    meta = {"cwd": os.getcwd(), "path": list(sys.path), "environ": dict(os.environ),
            "count": shell.execution_count}  # fmt: skip
    not_copied = []
    try:
        _write(path, meta, values, cloudpickle)
    except Exception:
        # Find what cannot be pickled, name by name, and write the rest.
        for name, value in list(values.items()):
            try:
                cloudpickle.dumps(value, protocol=PROTOCOL)
            except Exception as exc:
                not_copied.append(_describe(name, value, exc))
                del values[name]
        try:
            _write(path, meta, values, cloudpickle)
        except Exception as exc:
            os.unlink(path)
            raise RuntimeError(f"the namespace cannot be pickled: {exc}") from None
    return {"bytes": os.path.getsize(path), "names": len(values), "cwd": meta["cwd"],
            "count": meta["count"],
            "not_copied": not_copied[:MAX_REPORTED],
            "not_copied_count": len(not_copied)}  # fmt: skip


def _write(path, meta, values, cloudpickle):
    """The state file: the metadata first (plain pickle: cwd, sys.path and the environment are
    restored before the names are read, which may import modules of the work dir), then the
    names."""
    with open(path, "wb") as f:
        pickle.dump(meta, f, protocol=PROTOCOL)
        cloudpickle.dump(values, f, protocol=PROTOCOL)


def load(path):
    """Read the state `save` wrote into this kernel, and remove the file."""
    shell = _shell()
    _chdir("/sandbox")  # out of the work dir the kernel started in, whatever follows
    with open(path, "rb") as f:
        meta = pickle.load(f)
        os.environ.clear()
        os.environ.update(meta["environ"])
        _chdir(meta["cwd"])
        sys.path[:] = meta["path"] + [p for p in sys.path if p not in meta["path"]]
        collecting = gc.isenabled()
        # Unpickling makes every object at once: the cyclic collector would walk the growing
        # heap again and again (it tripled the load time of 130,000 small dicts).
        gc.disable()
        try:
            values = pickle.load(f)
        finally:
            if collecting:
                gc.enable()
            os.unlink(path)
    shell.user_ns.update(values)
    shell.execution_count = meta["count"]
    return {"names": len(values), "cwd": os.getcwd(), "count": meta["count"]}


def rebase(cwd, path):
    """The session goes on in its own kernel on new layers: into the new work dir (a working
    directory in the old one stays there), and without the state file it left in the layer."""
    _chdir(cwd)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return {}


def _chdir(cwd):
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/sandbox")
