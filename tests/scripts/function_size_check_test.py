#!/usr/bin/env python3
"""scripts/function-size-check.py against a fixture whose function lengths are known: the
81-line body is reported with its file, line and length and makes the check fail; the 80-line
body, a long table and braces in strings and comments are not reported; --max moves the
limit; an allow-list entry silences a function, and one without a reason is refused; by
default tests/ is checked too, and the fixture is the one test file the allow-list excuses.
usage: function_size_check_test.py CHECKER FIXTURE"""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.abspath(sys.argv[1])
FIXTURE = os.path.abspath(sys.argv[2])
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, allow=""):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(allow)
    try:
        p = subprocess.run([sys.executable, CHECKER, "--allow", f.name, *args], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return p.returncode, p.stdout.splitlines(), p.stderr


# The limit of 80: only the 81-line body is over it.
rc, out, err = run(FIXTURE)
check(rc == 1, f"an 81-line function fails the check (exit {rc})")
check(out == [f"{FIXTURE}:89: eighty_one_lines is 81 lines (limit 80)"], f"exactly the 81-line function is listed: {out}")
check("1 function(s) over 80 lines" in err, f"the count is on standard error: {err!r}")

# A limit of 81 lets both through; one of 79 catches the 80-line body too.
rc, out, _ = run("--max", "81", FIXTURE)
check(rc == 0 and out == [f"function-size-check: no function over 81 lines in 1 files"], f"--max 81: exit 0, nothing listed: {rc} {out}")
rc, out, _ = run("--max", "79", FIXTURE)
check(rc == 1 and [l.split(": ")[1] for l in out] == ["eighty_lines is 80 lines (limit 79)", "eighty_one_lines is 81 lines (limit 79)"],
      f"--max 79: both functions listed, in file order: {out}")

# An allow-list entry with a reason silences that function only.
rc, out, _ = run(FIXTURE, allow=f"# comment line\n{FIXTURE}:eighty_one_lines  a generated table walk\n")
check(rc == 0, f"an allowed function passes (exit {rc}, {out})")
rc, out, _ = run("--max", "79", FIXTURE, allow=f"{FIXTURE}:eighty_one_lines  a generated table walk\n")
check(rc == 1 and len(out) == 1 and "eighty_lines is 80" in out[0], f"the allow-list silences only its entry: {out}")
rc, out, err = run(FIXTURE, allow=f"{FIXTURE}:eighty_one_lines\n")
check(rc != 0 and "needs a reason" in err, f"an entry without a reason is refused: {rc} {err!r}")

# A folder is searched for C/C++ files.
rc, out, _ = run(os.path.dirname(FIXTURE))
check(rc == 1 and out == [f"{os.path.dirname(FIXTURE)}/function_size_fixture.cpp:89: eighty_one_lines is 81 lines (limit 80)"],
      f"a folder: its C/C++ files are checked: {out}")

# Other homes of a function body: inside extern "C", a C function returning a struct
# pointer, an operator, a body after a constructor's initialisers; and a long
# aggregate initialiser, which is none.
def body(n):
    return "\n".join(["    x += 1;"] * (n - 2))


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "kinds.cpp")
    with open(path, "w") as f:
        f.write('extern "C" {\nint in_c(int x) {\n' + body(81) + '\n}\n}\n'
                "static struct foo *get_foo(int x) {\n" + body(82) + "\n}\n"
                "struct A {\n    A(int v) : x(v), y{v} {\n" + body(83) + "\n}\n"
                "    bool operator==(const A &o) const {\n" + body(84) + "\n}\n    int x, y;\n};\n"
                "const int table[] = {\n" + "    1,\n" * 90 + "};\n")
    rc, out, _ = run(path)
    got = [l.split(": ", 1)[1] for l in out]
    check(got == ["in_c is 81 lines (limit 80)", "get_foo is 82 lines (limit 80)",
                  "A is 83 lines (limit 80)", "operator== is 84 lines (limit 80)"],
          f"every kind of function body is measured, the table is not: {got}")

# By default, from the top of the tree, tests/ is checked like the rest: with an empty allow-list
# the fixture's 81-line function is listed; the project's allow-list excuses it, by name.
TOP = os.path.dirname(os.path.dirname(CHECKER))
REL = os.path.relpath(FIXTURE, TOP)
if os.path.exists(os.path.join(TOP, ".git")):
    p = subprocess.run([sys.executable, CHECKER, "--allow", os.devnull], cwd=TOP, capture_output=True, text=True)
    check(f"{REL}:89: eighty_one_lines is 81 lines (limit 80)" in p.stdout.splitlines(),
          f"the default scope includes tests/: {p.stdout!r}")
else:
    print("not a git checkout: the default scope is not checked")
p = subprocess.run([sys.executable, CHECKER, REL], cwd=TOP, capture_output=True, text=True)
check(p.returncode == 0 and p.stdout.startswith("function-size-check: no function over 80"),
      f"the project's allow-list excuses the fixture: {p.returncode} {p.stdout!r}")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
