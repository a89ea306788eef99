#!/usr/bin/env python3
"""Lists every C/C++ function body longer than a limit (80 lines by default).

usage: scripts/function-size-check.py [--max N] [--allow FILE] [PATH...]
  PATH     files or folders to check (default: the tracked C/C++ files under
           libmsg/, libremoteio/, sortapp/, simulator/, river/ and tests/)
  --max N  the longest body allowed, in lines (default 80)
  --allow  allow-list (default scripts/function-size-allow.txt): lines of
           "path:function  reason"; listed functions are not reported

A body's length counts the lines from its opening brace to its closing brace,
both included (one more than clang-tidy's readability-function-size counts).
Prints "file:line: function is N lines" for each one over the
limit and exits 1 if any; exits 0 when none.

The scan is lexical: comments, strings and preprocessor lines are removed,
then braces are matched. A brace opens a function body when the text before
it, back to the previous ';', '{' or '}', holds a '(' and is not a class,
struct, union, enum or namespace head nor an initialiser ('= {'); braces in a
constructor's member initialisers belong to the head. Lambdas and
local classes are part of the function that holds them.

Tests are held to the same limit: a long scenario is split into named steps
(or SECTIONs and helpers). The one exception is the checker's own fixture,
tests/scripts/function_size_fixture.cpp, whose 81-line function is there on
purpose; the allow-list names it.
"""
import argparse
import os
import re
import subprocess
import sys

ROOTS = ["libmsg", "libremoteio", "sortapp", "simulator", "river", "tests"]
SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp")
SCOPE_HEAD = re.compile(r"^(template\s*<.*>\s*)?(class|struct|union|namespace)\b", re.S)
ENUM_HEAD = re.compile(r"^(typedef\s+)?enum\b")
ATTRIBUTES = re.compile(r"\b(alignas|__attribute__|__declspec)\s*\(")


def strip_code(text):
    """Blanks comments, string and character literals and preprocessor lines,
    keeping every newline so that offsets map to the same lines."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : end]))
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")  # a digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(head):
    """The name a function head declares: the qualified identifier before its
    parameter list (the first '(' outside template brackets)."""
    head = ATTRIBUTES.sub(" ", head)
    depth = 0
    for k, ch in enumerate(head):
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif ch == "(" and depth == 0:
            m = re.search(r"([~\w:]+(?:\s*<[^()]*>)?|operator\s*\S+)\s*$", head[:k])
            if m:
                return re.sub(r"\s+", "", m.group(1))
            break
    return "?"


def classify(head):
    """'scope' for a head whose body holds more declarations, 'function' for a
    function body, 'other' for anything else (initialisers, enums)."""
    h = head.strip()
    if ENUM_HEAD.match(h) or h.endswith("=") or not h:
        return "other"
    bare = ATTRIBUTES.sub(" ", h)
    if SCOPE_HEAD.match(bare) and ("(" not in bare or bare.startswith("namespace")):
        return "scope"
    if re.match(r'^extern\s*"\s*"\s*$', h):  # extern "C", its string blanked
        return "scope"
    if "(" in h:
        return "function"
    return "other"


def in_member_initialisers(head):
    """True when a brace ends a constructor's member initialiser (A() : x{1}),
    not the body it precedes."""
    return bool(re.search(r"\)\s*(noexcept\b[^:]*)?:(?!:)", head)) and bool(re.search(r"[\w>]\s*$", head))


def long_functions(path, limit):
    """(line, name, length) of every function in a file longer than limit."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_code(f.read())
    found = []
    line_of = [0] * (len(code) + 1)
    line = 1
    for k, ch in enumerate(code):
        line_of[k] = line
        if ch == "\n":
            line += 1
    line_of[len(code)] = line

    def match_brace(k):
        depth = 0
        for j in range(k, len(code)):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    return j
        return len(code)

    head_start = 0
    k = 0
    while k < len(code):
        ch = code[k]
        if ch in ";}":
            head_start = k + 1
        elif ch == "{":
            head = code[head_start:k]
            kind = classify(head)
            if kind == "function" and in_member_initialisers(head):
                k = match_brace(k) + 1  # the head goes on to the body
                continue
            if kind == "scope":
                head_start = k + 1  # look inside: members and nested scopes
            else:
                end = match_brace(k)
                if kind == "function":
                    length = line_of[end] - line_of[k] + 1
                    if length > limit:
                        found.append((line_of[k], function_name(head), length))
                k = end
                head_start = k + 1
        k += 1
    return found


def tracked_files(paths):
    if paths:
        files = []
        for p in paths:
            if os.path.isdir(p):
                for root, _, names in os.walk(p):
                    files += [os.path.join(root, n) for n in names]
            else:
                files.append(p)
    else:
        roots = [r for r in ROOTS if os.path.isdir(r)]
        out = subprocess.run(["git", "ls-files", "-z", "--"] + roots, check=True, capture_output=True, text=True)
        files = [f for f in out.stdout.split("\0") if f]
    return sorted(f for f in files if f.endswith(SUFFIXES) and os.path.isfile(f))


def read_allow(path):
    allowed = set()
    if not path or not os.path.exists(path):
        return allowed
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            entry = raw.split("#", 1)[0].strip()
            if not entry:
                continue
            parts = entry.split(None, 1)
            if len(parts) < 2:
                sys.exit(f"{path}:{n}: an entry needs a reason: path:function  reason")
            allowed.add(parts[0])
    return allowed


def main():
    ap = argparse.ArgumentParser(description="Lists C/C++ functions longer than a limit.")
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--max", type=int, default=80)
    ap.add_argument("--allow", default=None)
    args = ap.parse_args()
    if not args.paths:
        os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    allow_path = args.allow
    if allow_path is None:
        allow_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "function-size-allow.txt")
    allowed = read_allow(allow_path)
    files = tracked_files(args.paths)
    bad = 0
    for path in files:
        for line, name, length in long_functions(path, args.max):
            if f"{path}:{name}" in allowed:
                continue
            print(f"{path}:{line}: {name} is {length} lines (limit {args.max})")
            bad += 1
    if bad:
        print(f"function-size-check: {bad} function(s) over {args.max} lines in {len(files)} files", file=sys.stderr)
        return 1
    print(f"function-size-check: no function over {args.max} lines in {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
