"""JVM jars: the Maven artifacts the java and junit rows put on their class path, fetched by
Maven (Debian's `maven`) from the lock beside the rows, every jar checked against its SHA-256.

Maven, not Coursier: Debian packages Maven (Coursier's launcher comes only from its own
releases, which an air-gapped host's Debian mirror does not carry), Maven is the reference for
how Maven Central's POMs resolve, and an operator's mirror is Maven's own `<mirror>` setting.
Maven checks a download against the `.sha1` beside it on the same server; the lock's SHA-256
holds across servers and mirrors, so a jar that differs from the one locked is refused.

The lock (packages/maven/jars.lock) lists the whole resolved closure, so set-up fetches each
locked artifact without resolving anything; `sandlot packages lock` resolves the rows' direct
artifacts (MAVEN_JARS in languages/jvm.py) with Maven's transitive resolution to rewrite it.
When Maven Central cannot be reached, the jars Debian packages are linked in instead.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from sandlot.install.apt import APT_INSTALL, installed_debs
from sandlot.install.files import (
    fresh_dir,
    prepare_runtime,
    replace_dir,
    stamp_matches,
    write_stamp,
)
from sandlot.install.process import host_env, run
from sandlot.install.sets import (
    LOCKS,
    Mirrors,
    SetStatus,
    fallback_line,
    read_status,
    write_status,
)
from sandlot.install.step import Setup, SetupError
from sandlot.languages import JARS_DIR, MAVEN_JARS, VERSIONS_FILE

JARS_LOCK = LOCKS / "maven" / "jars.lock"
MVN = "/usr/bin/mvn"
# Pinned: a Maven 3.8 binds `dependency:` to a plugin version of 2015 otherwise.
COPY = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies"
# The jars Debian 12 packages of the lock's artifacts, for a host that cannot reach Maven
# Central: artifactId -> (Debian's jar, its package). Debian has no org.json (its android-json
# stand-in throws a checked JSONException) and no RxJava 2.
DEBIAN_JARS = {
    "junit-platform-console-standalone": (
        "/usr/share/java/junit-platform-console-standalone.jar", "junit5"),
    "assertj-core": ("/usr/share/java/assertj-core.jar", "libassertj-core-java"),
    "byte-buddy": ("/usr/share/java/byte-buddy.jar", "libbyte-buddy-java"),
    "javatuples": ("/usr/share/java/javatuples.jar", "libjavatuples-java"),
    "reactive-streams": ("/usr/share/java/reactive-streams.jar", "libreactive-streams-java"),
}  # fmt: skip
LOCK_HEADER = """\
# The jars of the java and junit rows, as Maven resolved the direct artifacts of MAVEN_JARS
# (sandlot/languages/jvm.py), each with the SHA-256 of its jar. Written by `sandlot packages
# lock`; `sandlot setup` fetches exactly these and refuses a jar whose digest differs.
"""


@dataclass(frozen=True, slots=True)
class Pin:
    group: str
    artifact: str
    version: str
    sha256: str = ""

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    def repository_path(self) -> str:
        """Where Maven's repository layout keeps the jar."""
        name = f"{self.artifact}-{self.version}.jar"
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{name}"


def parse_coordinate(text: str, sha256: str = "") -> Pin:
    group, artifact, version = text.split(":")
    return Pin(group, artifact, version, sha256)


def read_lock(text: str) -> list[Pin]:
    lines = (line.split() for line in text.splitlines() if line.strip() and line[0] != "#")
    return [parse_coordinate(coordinate, sha256) for coordinate, sha256 in lines]


def write_lock(pins: list[Pin]) -> str:
    body = "".join(f"{p.coordinate} {p.sha256}\n" for p in sorted(pins, key=lambda p: p.coordinate))
    return LOCK_HEADER + body


def sha256_of(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def pom(pins: list[Pin]) -> str:
    deps = "".join(
        f"<dependency><groupId>{escape(p.group)}</groupId><artifactId>{escape(p.artifact)}"
        f"</artifactId><version>{escape(p.version)}</version></dependency>"
        for p in pins
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>sandlot</groupId><artifactId>jars</artifactId><version>0</version>"
        f"<packaging>pom</packaging><dependencies>{deps}</dependencies></project>\n"
    )


def settings(mirrors: Mirrors) -> str:
    return (
        "<settings><mirrors><mirror><id>sandlot</id><mirrorOf>*</mirrorOf>"
        f"<url>{escape(mirrors.maven)}</url></mirror></mirrors></settings>\n"
    )


def maven_fetch(pins: list[Pin], mirrors: Mirrors, work: Path, transitive: bool) -> Path:
    """Maven copies `pins` (and, when `transitive`, what they depend on at run time) into a
    directory in repository layout, which it returns."""
    (work / "pom.xml").write_text(pom(pins))
    out = work / "out"
    exclude = "false" if transitive else "true"
    argv = [MVN, "-B", "-q", f"-Dmaven.repo.local={work / 'repository'}", COPY,
            f"-DoutputDirectory={out}", "-Dmdep.useRepositoryLayout=true",
            "-DincludeScope=runtime", f"-DexcludeTransitive={exclude}"]  # fmt: skip
    if mirrors.maven:
        (work / "settings.xml").write_text(settings(mirrors))
        argv += ["-s", str(work / "settings.xml")]
    run(argv, env=host_env(HOME=str(work)), cwd=str(work))
    return out


def lock_jars(mirrors: Mirrors) -> str:
    """The lock's text for MAVEN_JARS as Maven resolves them now."""
    with tempfile.TemporaryDirectory() as tmp:
        out = maven_fetch([parse_coordinate(c) for c in MAVEN_JARS], mirrors, Path(tmp), True)
        pins = []
        for jar in out.rglob("*.jar"):
            version_dir = jar.parent
            group = version_dir.parent.parent.relative_to(out).as_posix().replace("/", ".")
            pins.append(Pin(group, version_dir.parent.name, version_dir.name, sha256_of(jar)))
    return write_lock(pins)


def ensure_jars(setup: Setup) -> str:
    target = Path(JARS_DIR.format(runtime=setup.runtime))
    lock = JARS_LOCK.read_text()
    pins = read_lock(lock)
    if stamp_matches(target, lock):
        return "ok (already present)"
    setup.log(f"jars: fetching {len(pins)} locked Maven artifacts into {target} ...")
    prepare_runtime(setup)
    new = fresh_dir(target.with_name(f".{target.name}.new"))
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        try:
            out = maven_fetch(pins, setup.mirrors, Path(tmp), False)
        except SetupError as exc:
            return jars_fallback(setup, target, new, pins, exc)
        for pin in pins:
            jar = out / pin.repository_path()
            digest = sha256_of(jar) if jar.exists() else "absent"
            if digest != pin.sha256:
                raise SetupError(f"{pin.coordinate}: the jar's SHA-256 is {digest}, the lock says "
                                 f"{pin.sha256}; refusing it")  # fmt: skip
            os.replace(jar, new / f"{pin.artifact}.jar")
    origin = setup.mirrors.maven or "Maven Central"
    write_versions(new, {pin.artifact: pin.version for pin in pins})
    write_status(new, SetStatus("jars", "registry", origin, len(pins)))
    replace_dir(new, target)
    write_stamp(target, lock)
    return f"fetched {len(pins)} jars (SHA-256 checked) into {target}"


def write_versions(target: Path, versions: dict[str, str]) -> None:
    """VERSIONS_FILE: `ARTIFACT VERSION` lines (the junit row's version probe reads it)."""
    (target / VERSIONS_FILE).write_text("".join(f"{a} {v}\n" for a, v in versions.items()))


def deb_version(package: str) -> str:
    return run(["dpkg-query", "-W", "-f=${Version}", package]).strip()


def jars_fallback(setup: Setup, target: Path, new: Path, pins: list[Pin], exc: SetupError) -> str:
    """Debian's jars of the locked artifacts that Debian has, linked under the same names. A
    host that has the jars from an earlier run keeps them."""
    if (read_status(target) or {}).get("source") == "registry":
        raise SetupError(f"the jars' lock changed and Maven cannot fetch them: {exc}")
    packages = sorted({package for _, package in DEBIAN_JARS.values()})
    absent = [pkg for pkg in packages if pkg not in installed_debs(packages)]
    if absent:
        run([*APT_INSTALL, *absent], env=host_env(DEBIAN_FRONTEND="noninteractive"))
    missing, versions = [], {}
    for pin in pins:
        debian = DEBIAN_JARS.get(pin.artifact)
        if debian and os.path.exists(debian[0]):
            (new / f"{pin.artifact}.jar").symlink_to(debian[0])
            versions[pin.artifact] = f"{deb_version(debian[1])} (Debian's {debian[1]})"
        else:
            missing.append(pin.coordinate)
    write_versions(new, versions)
    reason = str(exc).splitlines()[-1].strip()[:200]
    status = SetStatus("jars", "debian", " ".join(packages), len(pins), missing, reason)
    write_status(new, status)
    replace_dir(new, target)  # no stamp: the next run tries Maven Central again
    return fallback_line(status)
