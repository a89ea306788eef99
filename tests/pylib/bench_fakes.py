"""Stand-ins for the programs the benchmark drivers (scripts/compare.py, scripts/coll-compare.py)
run, for their tests: the preamble every stand-in starts with, msgrun and mpirun, and the
writing of a stand-in tree. A stand-in prints what the real program would, from figures
fixed per case; msgrun and mpirun run the program they are given with FAKE_RANKS set (and
mpirun FAKE_MPI_TCP, 1 when asked for Open MPI's ofi tcp path)."""
import os
import stat

COMMON = """#!/usr/bin/env python3
import json, os, sys, time
def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
"""
# msgrun -n N PROGRAM ARGS...
MSGRUN = """
os.environ["FAKE_RANKS"] = sys.argv[2]
os.execv(sys.argv[3], sys.argv[3:])
"""
# mpirun OPTIONS... PROGRAM ARGS...: the first absolute path is the program.
MPIRUN = """
if "--version" in sys.argv:
    print("mpirun (fake) 0.0"); sys.exit(0)
i = next(i for i, a in enumerate(sys.argv) if i > 0 and a.startswith("/"))
os.environ["FAKE_RANKS"] = arg("-np")
os.environ["FAKE_MPI_TCP"] = "1" if "mtl_ofi_provider_include" in sys.argv else "0"
os.execv(sys.argv[i], sys.argv[i:])
"""
# Where the drivers look for them under a fake top folder (bin/ goes first on PATH).
LAUNCHERS = {"build/libmsg/tools/msgrun": MSGRUN, "bin/mpirun": MPIRUN}


def make_fakes(top, fakes):
    """Writes each stand-in of `fakes` (path under top -> body after COMMON), executable."""
    for path, body in fakes.items():
        full = os.path.join(top, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(COMMON + body)
        os.chmod(full, os.stat(full).st_mode | stat.S_IXUSR)
