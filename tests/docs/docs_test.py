#!/usr/bin/env python3
"""What README.md and docs/layout.md say about the code, checked against the code.

usage: docs_test.py SOURCE_ROOT CHECK     (VIADUCT_MSGRUN names msgrun for the sizes check)
  layout    docs/layout.md names every header of common/include/viaduct/ and every source file
            of sortapp/cluster/ and sortapp/cluster/phases/
  getenv    std::getenv is called outside common/include/viaduct/env.hpp only where
            docs/layout.md says: libmsg's bootstrap, the benchmarks, the DataPump's tools and
            sortapp's test hold point
  sizes     the size forms README.md calls "the same" parse to the same number (a VIADUCT_*
            setting read by msgrun), and a form it does not list is refused
  libmsg    the libmsg-only build README.md shows, configured, depends on what README.md says
            it needs, and on PMIx and rdma-core only when they are not disabled
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import check, failures, slurp  # noqa: E402

ROOT = sys.argv[1]


def text_of(rel):
    return slurp(os.path.join(ROOT, rel))


def layout_row(layout, folder):
    """The text of docs/layout.md's table row for `folder`."""
    m = re.search(r"^\| `" + re.escape(folder) + r"` \|.*$", layout, re.M)
    return m.group(0) if m else ""


def check_layout():
    layout = text_of("docs/layout.md")
    # [folder, extension, the table row that describes it]
    wanted = [("common/include/viaduct", ".hpp", "common/"),
              ("sortapp/cluster", ".cpp", "sortapp/cluster/"),
              ("sortapp/cluster/phases", ".cpp", "sortapp/cluster/")]
    looked = 0
    for folder, ext, row_name in wanted:
        row = layout_row(layout, row_name)
        check(row, f"docs/layout.md has no row for `{row_name}`")
        for f in sorted(os.listdir(os.path.join(ROOT, folder))):
            if f.endswith(ext):
                looked += 1
                check(f"`{f}`" in row or f"/{f}`" in row,
                      f"docs/layout.md's `{row_name}` row does not name {folder}/{f}: add it")
    print(f"layout: {looked} files looked for in docs/layout.md")


# Where docs/layout.md says getenv is called directly (folders, or a file's name anywhere).
DIRECT_READS = ["libmsg/src/bootstrap/", "libmsg/bench/", "river/tools/"]
DIRECT_READ_FILES = ["test_hold.cpp"]


def check_getenv():
    sites = 0
    for top in ["common", "libmsg", "libremoteio", "river", "sortapp", "simulator"]:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if not f.endswith((".c", ".cpp", ".h", ".hpp")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
                if rel == "common/include/viaduct/env.hpp":
                    continue
                for n, line in enumerate(text_of(rel).splitlines(), 1):
                    if not re.search(r"\bgetenv\s*\(", line):
                        continue
                    sites += 1
                    allowed = rel.startswith(tuple(DIRECT_READS)) or f in DIRECT_READ_FILES
                    check(allowed, f"{rel}:{n} calls getenv: read the variable through "
                          "viaduct::env (common/include/viaduct/env.hpp), as docs/layout.md says")
    row = layout_row(text_of("docs/layout.md"), "common/")
    check(sites == 0 or "`getenv`" in row,
          f"{sites} direct getenv calls, and docs/layout.md's `common/` row does not say where")
    print(f"getenv: {sites} direct calls, all where docs/layout.md says")


def parse_with_msgrun(form):
    """bytes_per_rank of a 2-rank job with VIADUCT_BUFFER_SIZE=form, and msgrun's stderr."""
    env = dict(os.environ, VIADUCT_BUFFER_SIZE=form)
    r = subprocess.run([os.environ["VIADUCT_MSGRUN"], "-n", "2", "--receive-memory", "--json"],
                       capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        return None, r.stderr
    return json.loads(r.stdout)["bytes_per_rank"], r.stderr


def scaled(form):
    """Sixteen times a size form (4K is below the smallest buffer msgrun accepts; 64K is not);
    a bare suffix ("KB") is taken as 4 of it."""
    num = re.match(r"\d*", form).group()
    return str(int(num or "4") * 16) + form[len(num):]


def check_sizes():
    readme = " ".join(text_of("README.md").split())
    m = re.search(r"\(((?:`[^`]+`,? (?:and )?)+)are the same([^)]*)\)", readme)
    if not check(m, "README.md: no list of size forms that 'are the same'"):
        return
    forms = re.findall(r"`([^`]+)`", m.group(1))
    values = {}
    for form in map(scaled, forms):
        value, err = parse_with_msgrun(form)
        check(value is not None and "not valid" not in err,
              f"VIADUCT_BUFFER_SIZE={form} (README.md's form x16) refused: {err.strip()}")
        values[form] = value
    check(len(set(values.values())) == 1, f"README.md's equal size forms differ: {values}")
    refused = re.findall(r"`([^`]+)`[^`;]*is refused", m.group(2)) + ["Q"]
    for form in map(scaled, refused):
        _, err = parse_with_msgrun(form)
        check("not valid" in err, f"VIADUCT_BUFFER_SIZE={form} accepted, which README.md "
              f"says is refused: {err.strip()}")
    print(f"sizes: {', '.join(forms)} (x16) give the same setting; {', '.join(refused)} refused")


# Meson's names of the optional dependencies, as README.md names them.
OPTIONAL = {"pmix": "PMIx", "libibverbs": "rdma-core", "librdmacm": "rdma-core"}


def configured_deps(setup_args):
    with tempfile.TemporaryDirectory(prefix="viaduct-libmsg-only-") as d:
        r = subprocess.run(["meson", "setup", d + "/b", *setup_args], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
        if not check(r.returncode == 0, f"meson setup {' '.join(setup_args)}:\n{r.stdout[-3000:]}"):
            return set()
        r = subprocess.run(["meson", "introspect", d + "/b", "--dependencies"],
                           capture_output=True, text=True, check=True)
        return {dep["name"] for dep in json.loads(r.stdout)} - {"threads"}


def check_libmsg_only():
    readme = " ".join(text_of("README.md").split())
    m = re.search(r"A libmsg-only build needs (.*?)```sh meson setup (build-libmsg[^`]*?) ninja",
                  readme)
    if not check(m, "README.md: no 'A libmsg-only build needs ...' followed by its meson setup"):
        return
    claim, command = m.group(1), m.group(2).split()[1:]
    deps = configured_deps(command)
    for dep in sorted(deps):
        check(OPTIONAL.get(dep, dep) in claim,
              f"the libmsg-only build depends on {dep}, which README.md's list does not name")
    without = configured_deps(command + ["-Dpmix=disabled", "-Dverbs=disabled"])
    check(without and not without & set(OPTIONAL),
          f"-Dpmix=disabled -Dverbs=disabled still uses {sorted(without & set(OPTIONAL))}")
    for dep in sorted(without):
        check(dep in claim, f"{dep}, always needed, is not in README.md's list")
    print(f"libmsg-only build: {', '.join(sorted(deps))}; "
          f"with PMIx and verbs disabled: {', '.join(sorted(without))}")


def main():
    checks = {"layout": check_layout, "getenv": check_getenv, "sizes": check_sizes,
              "libmsg": check_libmsg_only}
    checks[sys.argv[2]]()
    print(f"docs {sys.argv[2]}: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
