#!/bin/sh
# check_layers_fails: scripts/check-layers finds each kind of breach planted in
# a copy of the source tree, naming the file, the line and the include.
# Usage: check_layers_fails.sh SOURCE_DIR
set -eu
src=$1
check="$src/scripts/check-layers"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

fresh_copy() {
  rm -rf "$work/tree"
  mkdir "$work/tree"
  for d in io config data model reporting protocol actors runtime; do cp -R "$src/$d" "$work/tree/$d"; done
}

# expect NAME TEXT: check-layers fails on the tree and prints TEXT.
expect() {
  if python3 "$check" "$work/tree" >"$work/out" 2>&1; then
    echo "check_layers_fails: $1: check-layers passed"; status=1
  elif ! grep -qF -- "$2" "$work/out"; then
    echo "check_layers_fails: $1: no \"$2\" in:"; cat "$work/out"; status=1
  else
    echo "check_layers_fails: $1: ok"
  fi
}

# Planted after the first #include "..." so the line number is known.
plant() {  # FILE INCLUDE
  line=$(grep -n -m1 '^#include "' "$work/tree/$1" | cut -d: -f1)
  sed -i "${line}a #include \"$2\"" "$work/tree/$1"
  echo $((line + 1))
}

fresh_copy
python3 "$check" "$work/tree" >"$work/out" 2>&1 || { echo "check_layers_fails: the clean copy fails:"; cat "$work/out"; exit 1; }

line=$(plant model/mlp.hpp runtime/node/node.hpp)
expect "upward include" \
  "model/mlp.hpp:$line: #include \"runtime/node/node.hpp\": model/ must not include runtime/node/"

fresh_copy
line=$(plant runtime/net/ports.cpp runtime/cli/commands.hpp)
expect "runtime subfolder upward" \
  "runtime/net/ports.cpp:$line: #include \"runtime/cli/commands.hpp\": runtime/net/ must not include runtime/cli/"

fresh_copy
line=$(plant actors/worker_state.hpp actors/worker.hpp)
expect "cycle between files" "include cycle between actors/worker, actors/worker_state"

fresh_copy
line=$(plant protocol/errc.cpp actors/worker.hpp)
expect "protocol reaches up to the actors" \
  "protocol/errc.cpp:$line: #include \"actors/worker.hpp\": protocol/ must not include actors/"

fresh_copy
line=$(plant reporting/log.cpp protocol/messages.hpp)
expect "reporting reaches up to the protocol" \
  "reporting/log.cpp:$line: #include \"protocol/messages.hpp\": reporting/ must not include protocol/"

fresh_copy
line=$(plant model/layers/dense.hpp reporting/log.hpp)
expect "model/layers is at model's level" \
  "model/layers/dense.hpp:$line: #include \"reporting/log.hpp\": model/ must not include reporting/"

fresh_copy
plant protocol/floats.hpp config/options.hpp >/dev/null
expect "protocol reaches the options" \
  "protocol/messages.hpp:1: reaches config/options.hpp through protocol/messages.hpp -> protocol/tensor.hpp -> protocol/floats.hpp -> config/options.hpp"

fresh_copy
lines=$(wc -l <"$work/tree/model/init.cpp")
seq 400 | sed 's|^|// |' >>"$work/tree/model/init.cpp"
expect "long file" "model/init.cpp:$((lines + 400)): $((lines + 400)) lines, more than 400"

fresh_copy
cp "$work/tree/runtime/net/ports.cpp" "$work/tree/runtime/stray.cpp"
expect "file outside the runtime subfolders" "runtime/stray.cpp:1: not in a layer folder"

exit $status
