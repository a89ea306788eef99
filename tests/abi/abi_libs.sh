# Shared by abi_check.sh and update_baseline.sh: which libraries, where they are built,
# and which types are public (public_types.supp: those the public headers define).
abi_libs=(libmsg libremoteio)

# abi_so BUILD_DIR NAME: the shared library's path in the build.
abi_so() {
  echo "$1/$2/$2.so"
}

# abi_supp SOURCE_DIR: the suppressions that keep only the public headers' types.
abi_supp() {
  echo "$1/tests/abi/public_types.supp"
}
