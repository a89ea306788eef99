#!/usr/bin/env python3
"""The ninja targets a build directory's tests need, so a stage builds only those.

usage: scripts/test-targets.py BUILD_DIR [SUITE...]
Prints one target a line (paths relative to BUILD_DIR): for every test of the given meson
suites (all tests when none is given), the programs it runs and depends on (its `depends`)
and every program of the build that its command line or environment names (a test that
finds a program through a variable without listing it in `depends` still gets it).
Exit 1, naming the suite, when a given suite has no test.
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    r = subprocess.run(["meson", "introspect", build, what], capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout)


def named_files(test):
    """The absolute paths in a test's command line and environment values."""
    for text in list(test["cmd"]) + list(test["env"].values()):
        for part in text.replace(":", " ").replace("=", " ").split():
            if part.startswith("/"):
                yield os.path.realpath(part)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: scripts/test-targets.py BUILD_DIR [SUITE...]")
    build, suites = os.path.realpath(sys.argv[1]), set(sys.argv[2:])
    targets = introspect(build, "--targets")
    files_of = {t["id"]: [os.path.realpath(f) for f in t["filename"]] for t in targets}
    built = {f for files in files_of.values() for f in files}
    tests = introspect(build, "--tests")
    seen = set()
    wanted = set()
    for test in tests:
        # meson names a suite PROJECT:SUITE.
        names = {s.split(":", 1)[-1] for s in test["suite"]}
        if suites and not names & suites:
            continue
        seen |= names
        for dep in test["depends"]:
            wanted.update(files_of.get(dep, []))
        wanted.update(f for f in named_files(test) if f in built)
    missing = suites - seen
    if missing:
        sys.exit(f"test-targets: no test in suite(s) {', '.join(sorted(missing))} of {build}")
    for f in sorted(wanted):
        print(os.path.relpath(f, build))


if __name__ == "__main__":
    main()
