"""JVM rows: class-data (CDS) archives recorded once, so that a compiler or a program maps its
classes instead of loading them."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import zipfile
from pathlib import Path

from sandlot.install.files import install_file
from sandlot.install.process import PATH, as_nobody, run
from sandlot.install.step import Setup, SetupError
from sandlot.languages import JAVA, Language


def ensure_cds(setup: Setup) -> str:
    """Record each JVM row's class-data archives: classes parsed and verified once, then mapped.

    A JVM compiler spends most of a hello world loading classes (2.8 s for kotlinc here), and a
    Scala program most of its start loading the Scala library; with an archive the JVM maps them
    instead. An archive fits one JDK build and one set of jars, so the stamp holds both versions;
    a JVM that finds it stale or missing runs without it.
    """
    done = []
    for row in setup.rows:
        if row.cds:
            done.append(record_cds(setup, row, row.cds, row.compile or row.run))
        if row.run_cds:
            done.append(record_cds(setup, row, row.run_cds, row.run, build=True))
    return "; ".join(done) or "nothing to do"


def record_cds(
    setup: Setup, row: Language, where: str, template: tuple[str, ...], build: bool = False
) -> str:
    """Run `template` once on the row's sample, recording the classes it loads into `where`.
    With `build`, the sample is compiled first and its classes put in the row's `cds_jar`."""
    runtime = str(setup.runtime)
    archive = Path(where.format(runtime=runtime))
    stamp = archive.with_name(f".{archive.name}.stamp")
    # The archive is written by the JVM that records it; it cannot also map a previous one.
    # (A launcher such as javac passes JVM options on as -J-XX:...)
    share = r"(-J)?-XX:SharedArchiveFile=\S+"
    argv = [
        re.sub(f" ?{share}", "", part)
        for part in row.argv(template, runtime, 1024)
        if not re.fullmatch(share, part)
    ]
    java = subprocess.run([JAVA, "-version"], capture_output=True, text=True,
                          env={"PATH": PATH, "HOME": "/tmp"}).stderr  # fmt: skip
    java_line = java.splitlines()[0] if java else ""
    # The JVM refuses an archive whose jars changed since (npm reinstalls kotlin-compiler's
    # whenever the npm package list grows): their times are part of the stamp.
    jars = [f"{p}@{os.stat(p).st_mtime_ns}" for p in (r.format(runtime=runtime)
            for r in row.requires) if p.endswith(".jar") and os.path.exists(p)]  # fmt: skip
    spec = f"{java_line}\n{tool_version(row, runtime)}\n{argv}\n{row.sample}\n{jars}\n"
    if archive.exists() and stamp.exists() and stamp.read_text() == spec:
        return f"{row.name} {archive.name} ok (already present)"
    setup.log(f"JVM class-data archive: recording {archive} ...")
    archive.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(archive.parent, 0o755)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o777)  # the recording JVM runs as nobody and writes its archive here
        (Path(tmp) / row.source).write_text(row.sample)
        os.chmod(Path(tmp) / row.source, 0o644)
        env = {**row.resolved_env(runtime), "PATH": PATH, "HOME": tmp}
        if build:
            assert row.compile is not None
            run(as_nobody(list(row.argv(row.compile, runtime, 1024))), env=env, cwd=tmp)
            pack_classes(Path(tmp), row, Path(row.cds_jar.format(runtime=runtime)))
        recorded = Path(tmp) / "recorded.jsa"
        env["JAVA_TOOL_OPTIONS"] = f"-XX:ArchiveClassesAtExit={recorded}"
        run(as_nobody(argv), env=env, cwd=tmp)
        if not recorded.exists():
            raise SetupError(f"{' '.join(argv)} left no class-data archive")
        install_file(recorded, archive)
    stamp.write_text(spec)
    return f"{row.name} {archive.name} recorded ({archive.stat().st_size >> 20} MiB)"


def pack_classes(workdir: Path, row: Language, jar: Path) -> None:
    """The compiled sample's artifact directories as a jar (a zip of class files)."""
    new = jar.with_name(f".{jar.name}.new")
    with zipfile.ZipFile(new, "w") as out:
        for artifact in row.artifacts:
            base = workdir / artifact
            for path in sorted(base.rglob("*")) if base.is_dir() else ():
                if path.is_file():
                    out.write(path, path.relative_to(base).as_posix())
    install_file(new, jar)


def tool_version(row: Language, runtime: str) -> str:
    """The first line the row's version probe prints: the stamp of caches built for it."""
    if not row.version:
        return ""
    done = subprocess.run(list(row.argv(row.version, runtime, 1024)), capture_output=True,
                          text=True, env={"PATH": PATH, "HOME": "/tmp"})  # fmt: skip
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else ""
