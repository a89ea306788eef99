#!/usr/bin/env python3
"""Writes a C++ header holding a text file as a string constant, so the binary carries data
that lives in the source tree as a file of its own.
usage: embed_text.py INPUT OUTPUT NAME"""
import sys

src, out, name = sys.argv[1], sys.argv[2], sys.argv[3]
with open(src, encoding="utf-8") as f:
    text = f.read()
delim = "embedded"
if f"){delim}\"" in text:
    sys.exit(f"embed_text.py: {src} contains the raw-string delimiter")
with open(out, "w", encoding="utf-8") as f:
    f.write(f"// Generated from {src.rsplit('/', 1)[-1]} by embed_text.py; edit that file.\n")
    f.write("#pragma once\n")
    f.write(f"inline constexpr const char {name}[] = R\"{delim}({text}){delim}\";\n")
