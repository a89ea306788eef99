#!/usr/bin/env python3
"""The installed manual pages against groff, the public headers and the installed programs.

usage: man_test.py BUILD_DIR

What this build installs is read from BUILD_DIR/meson-info/intro-installed.json (source ->
destination). Checks that every page formats with `groff -man -ww` without a single warning
and names itself in .TH and NAME; that every one-line page (.so) sources an installed page
whose NAME section names it; that every function msg.h, rio.h and river.h declare has a page
under its own name, named in that page's NAME section, so that `man FUNCTION` finds it; that
every FUNCTION(3) a page refers to is declared; that each library's status page lists every
status code of its header and libmsg.7 every VIADUCT_* variable msg.h names; that every
installed program has a page in section 1, which names every long option the program's
--help (and each of its subcommands' --help) lists. Skipped (77) without groff (Debian:
groff-base).
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SKIP, check, failures, slurp  # noqa: E402

# Each public header: its functions' prefix, the page that lists its status codes, its
# overview page and the status codes that page must list.
LIBRARIES = {
    "msg/msg.h": ("msg_", "msg_strerror.3", "libmsg.7", r"\bMSG_ERR_\w+"),
    "rio/rio.h": ("rio_", "rio_strerror.3", "libremoteio.7", r"\bRIO_ERR_\w+"),
    "river/river.h": ("river_", "river_strerror.3", "river.7", r"\bRIVER_(?:ERR_\w+|END)\b"),
}
PAGE = re.compile(r"/man([1-9])/([^/]+)\.\1$")


def declared_functions(header, prefix):
    """The functions a header declares: a line that starts with a type and names
    prefix_something( (the first one)."""
    declaration = re.compile(r"^\w[^(]*?\b(" + prefix + r"\w+)\(", re.M)
    return sorted(set(declaration.findall(slurp(header))))


def name_section(page_text):
    """The names a page's NAME section gives, before its '\\-'."""
    m = re.search(r"^\.SH NAME\n(.*?)^\.SH ", page_text, re.M | re.S)
    if not m:
        return []
    names = m.group(1).split("\\-")[0]
    return [n.strip() for n in names.replace("\n", " ").split(",") if n.strip()]


def plain(page_text):
    """The page's text with roff's escaped hyphens and font changes undone."""
    return re.sub(r"\\f[BIRP]", "", page_text.replace("\\-", "-"))


def installed(build_dir):
    """(pages, headers, programs): page file name -> source, header -> source, program name
    -> built file, for what this build installs."""
    with open(os.path.join(build_dir, "meson-info", "intro-installed.json")) as f:
        plan = json.load(f)
    pages, headers, programs = {}, {}, {}
    for source, dest in plan.items():
        if PAGE.search(dest):
            pages[os.path.basename(dest)] = source
        elif os.path.basename(os.path.dirname(dest)) == "bin":
            programs[os.path.basename(dest)] = source
        for header in LIBRARIES:
            if dest.endswith("/include/" + header):
                headers[header] = source
    return pages, headers, programs


def alias_target(text):
    """The page a one-line page sources ("man3/msg_init.3" -> "msg_init.3"), or None."""
    m = re.fullmatch(r"\.so man[1-9]/(\S+)\n?", text)
    return m.group(1) if m else None


def check_page(name, path, text):
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", path], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and r.stderr == "",
          f"groff -man -ww {name}: exit {r.returncode}\n{r.stderr}")
    base, section = name.rsplit(".", 1)
    m = re.search(r"^\.TH (\S+) (\S+)", text, re.M)
    check(m and m.group(1) == base.upper() and m.group(2) == section,
          f"{path}: .TH does not say {base.upper()} {section}")
    check(base in name_section(text), f"{path}: its NAME section does not name {base}")


def check_pages(pages):
    """Formats every page; returns page -> the names its NAME section gives (an alias: its
    target's), having checked that every alias sources a page that names it."""
    texts = {name: slurp(path) for name, path in pages.items()}
    named_by = {}
    for name, text in sorted(texts.items()):
        if alias_target(text) is None:
            check_page(name, pages[name], text)
            named_by[name] = name_section(text)
    for name, text in sorted(texts.items()):
        target = alias_target(text)
        if target is None:
            continue
        base, section = name.rsplit(".", 1)
        check(target.endswith("." + section) and base in named_by.get(target, []),
              f"{pages[name]} says {text.strip()!r}: not an installed page whose NAME names "
              f"{base}")
        named_by[name] = named_by.get(target, [])
    return texts, named_by


def check_library(header, path, texts, named_by):
    prefix, status_page, overview, codes_re = LIBRARIES[header]
    functions = declared_functions(path, prefix)
    check(len(functions) >= 10, f"{header}: only {len(functions)} declarations found")
    for fn in functions:
        check(fn in named_by.get(fn + ".3", []),
              f"{fn}, declared in {header}: no installed page {fn}.3 whose NAME names it")
    for page, text in sorted(texts.items()):
        for ref in sorted(set(re.findall(r"\b(" + prefix + r"\w+) \(3\)", text))):
            check(ref in functions, f"{page} refers to {ref}(3), which {header} does not declare")
    header_text = slurp(path)
    codes = sorted(set(re.findall(codes_re, header_text)))
    check(codes, f"{header}: no status codes found")
    for code in codes:
        check(f".BR {code} " in texts.get(status_page, ""), f"{status_page} does not list {code}")
    variables = sorted(set(re.findall(r"\bVIADUCT_[A-Z][A-Z_]*", header_text)))
    for var in variables:
        check(var in texts.get(overview, ""), f"{overview} does not name {var}")
    print(f"man: {header}: {len(functions)} functions, {len(codes)} status codes, "
          f"{len(variables)} variables")


def help_text(exe, *args):
    r = subprocess.run([exe, *args, "--help"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and r.stdout, f"{exe} {' '.join(args)} --help: exit {r.returncode}")
    return r.stdout


def subcommands(help_out):
    """The subcommands a CLI11 --help lists under "Subcommands:"."""
    m = re.search(r"^Subcommands:\n((?: +\S.*\n?)*)", help_out, re.M)
    return re.findall(r"^ {2}(\w[\w-]*) ", m.group(1), re.M) if m else []


def check_program(name, exe, texts):
    """The program's page exists (itself or the page its alias sources) and names every long
    option its --help lists."""
    page = name + ".1"
    if not check(page in texts, f"{name} is installed, with no page {page} installed"):
        return
    target = alias_target(texts[page])
    text = plain(texts[target] if target else texts[page])
    if not check(os.access(exe, os.X_OK), f"{exe}: not built"):
        return
    outputs = [help_text(exe)]
    outputs += [help_text(exe, sub) for sub in subcommands(outputs[0])]
    options = sorted(set(o for out in outputs for o in re.findall(r"--[a-z][a-z0-9-]*", out)))
    check(len(options) >= 2, f"{name} --help lists {len(options)} options")
    for opt in options:
        check(re.search(r"(?<![\w-])" + re.escape(opt) + r"(?![\w-])", text),
              f"{target or page} does not name {opt}, which {name} --help lists")


def main():
    build_dir = sys.argv[1]
    if shutil.which("groff") is None:
        print("groff is not installed (Debian: groff-base): the manual pages are not checked")
        return SKIP
    pages, headers, programs = installed(build_dir)
    texts, named_by = check_pages(pages)
    for header in LIBRARIES:
        if check(header in headers, f"{header} is not installed by this build"):
            check_library(header, headers[header], texts, named_by)
    check(programs, "no installed programs found")
    for name, exe in sorted(programs.items()):
        check_program(name, exe, texts)
    print(f"man: {len(pages)} pages ({sum(t is not None for t in map(alias_target, texts.values()))}"
          f" of one line), {len(programs)} programs: {' '.join(sorted(programs))}")
    print(f"man: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
