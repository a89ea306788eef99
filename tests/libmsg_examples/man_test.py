#!/usr/bin/env python3
"""libmsg's manual pages (libmsg/man/) against groff and against msg.h.

usage: man_test.py MSG_H MAN_DIR ALIAS_DIR
  MAN_DIR    the hand-written pages (*.1, *.3, *.7)
  ALIAS_DIR  where meson made the one-line .so pages of the other functions

Checks that every page formats with `groff -man -ww` without a single warning; that every
function msg.h declares is named in a page's NAME section and has a page of its own name (or
an alias sourcing the page that names it), so that `man FUNCTION` finds it; that every
msg_*(3) a page refers to is such a function; that msg_strerror.3 lists every MSG_ERR_* code
and libmsg.7 every VIADUCT_* variable msg.h names. Skipped (77) without groff (Debian:
groff-base).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from viaduct_checks import SKIP, check, failures, slurp  # noqa: E402

# A declaration: a line that starts with a type and names msg_something( (the first one).
DECLARATION = re.compile(r"^\w[^(]*?\b(msg_\w+)\(", re.M)


def declared_functions(header):
    return sorted(set(DECLARATION.findall(slurp(header))))


def name_section(page_text):
    """The names a page's NAME section gives, before its '\\-'."""
    m = re.search(r"^\.SH NAME\n(.*?)^\.SH ", page_text, re.M | re.S)
    if not m:
        return []
    names = m.group(1).split("\\-")[0]
    return [n.strip() for n in names.replace("\n", " ").split(",") if n.strip()]


def check_groff(page):
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and r.stderr == "",
          f"groff -man -ww {os.path.basename(page)}: exit {r.returncode}\n{r.stderr}")


def check_title(page, text):
    base, section = os.path.basename(page).rsplit(".", 1)
    m = re.search(r"^\.TH (\S+) (\S+)", text, re.M)
    check(m and m.group(1) == base.upper() and m.group(2) == section,
          f"{page}: .TH does not say {base.upper()} {section}")


def check_aliases(alias_dir, named_by, functions, pages):
    """Every function has a page under its own name, or an alias that sources the page whose
    NAME section names it."""
    for fn in functions:
        if fn + ".3" in pages:
            continue
        alias = os.path.join(alias_dir, fn + ".3")
        text = slurp(alias).strip()
        if not check(text, f"{fn}: no page {fn}.3 and no alias {alias}"):
            continue
        target = text[len(".so man3/"):] if text.startswith(".so man3/") else ""
        check(target in pages and fn in named_by.get(target, []),
              f"{alias} says {text!r}: not a page whose NAME names {fn}")


def main():
    header, man_dir, alias_dir = sys.argv[1:4]
    if shutil.which("groff") is None:
        print("groff is not installed (Debian: groff-base): the manual pages are not checked")
        return SKIP
    functions = declared_functions(header)
    check(len(functions) >= 20, f"{header}: only {len(functions)} declarations found")
    paths = sorted(glob.glob(os.path.join(man_dir, "*.[137]")))
    pages = {os.path.basename(p): slurp(p) for p in paths}
    named_by = {}
    for path in paths:
        text = pages[os.path.basename(path)]
        check_groff(path)
        check_title(path, text)
        named_by[os.path.basename(path)] = name_section(text)
        check(named_by[os.path.basename(path)], f"{path}: no NAME section")
    named = {n for names in named_by.values() for n in names}
    for fn in functions:
        check(fn in named, f"{fn}, declared in msg.h, is in no page's NAME section")
    check_aliases(alias_dir, named_by, functions, pages)
    for page, text in pages.items():
        for ref in sorted(set(re.findall(r"\b(msg_\w+) \(3\)", text))):
            check(ref in functions, f"{page} refers to {ref}(3), which msg.h does not declare")
    codes = sorted(set(re.findall(r"\bMSG_ERR_\w+", slurp(header))))
    for code in codes:
        check(f".BR {code} " in pages.get("msg_strerror.3", ""),
              f"msg_strerror.3 does not list {code}")
    variables = sorted(set(re.findall(r"\bVIADUCT_[A-Z][A-Z_]*", slurp(header))))
    for var in variables:
        check(var in pages.get("libmsg.7", ""), f"libmsg.7 does not name {var}")
    print(f"man: {len(pages)} pages formatted; {len(functions)} functions declared in msg.h, "
          f"{len(codes)} status codes, {len(variables)} variables")
    print(f"man: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
