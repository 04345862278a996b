#!/bin/sh
# check_test_kinds_fails: scripts/check-test-kinds finds a test program in the
# wrong kind's folder, planted in a copy of test/.
# Usage: check_test_kinds_fails.sh SOURCE_DIR
set -eu
src=$1
check="$src/scripts/check-test-kinds"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

fresh_copy() {
  rm -rf "$work/tree"
  mkdir "$work/tree"
  cp -R "$src/test" "$work/tree/test"
}

# expect NAME TEXT: check-test-kinds fails on the copy and prints TEXT.
expect() {
  if python3 "$check" "$work/tree" >"$work/out" 2>&1; then
    echo "check_test_kinds_fails: $1: check-test-kinds passed"; status=1
  elif ! grep -qF -- "$2" "$work/out"; then
    echo "check_test_kinds_fails: $1: no \"$2\" in:"; cat "$work/out"; status=1
  else
    echo "check_test_kinds_fails: $1: ok"
  fi
}

fresh_copy
python3 "$check" "$work/tree" >"$work/out" 2>&1 || { echo "check_test_kinds_fails: the clean copy fails:"; cat "$work/out"; exit 1; }

printf 'caf::actor_system sys{cfg};\n' >"$work/tree/test/unit/test_planted.cpp"
expect "actor system in a unit test" "test_planted.cpp: a unit test starts an actor system"

fresh_copy
printf 'process p({DOWNPOUR_BINARY});\n' >"$work/tree/test/unit/test_planted.cpp"
expect "binary in a unit test" "test_planted.cpp: a unit test starts the downpour binary"

fresh_copy
printf 'CHECK(1 == 1);\n' >"$work/tree/test/actors/test_planted.cpp"
expect "no actor in an actors test" "test_planted.cpp: an actors test without an actor system"

fresh_copy
printf 'CHECK(1 == 1);\n' >"$work/tree/test/test_planted.cpp"
expect "outside the kind folders" "test_planted.cpp: not in a kind folder"

fresh_copy
printf '#include <doctest/doctest.h>\nnamespace {\nint helper() { return 1; }\n}\n' \
  >"$work/tree/test/unit/test_planted.cpp"
expect "no namespace of its own" "test_planted.cpp: its code is not in \`namespace test_planted {\`"

exit $status
