#!/bin/sh
# make install, tested: installs BUILD_DIR into a temporary PREFIX, then builds a project outside
# bspkit that finds it with find_package(bspkit) and opens a generated map with it; also runs the
# installed binary. Usage: run.sh BUILD_DIR SOURCE_DIR [FLAGS]; FLAGS (compile and link) are those the
# library was built with that a consumer must share, e.g. -fsanitize=address,undefined for the ASan suite.
set -eu
build=$1
src=$2
flags=${3:-}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/bspkit-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1 || { cat "$prefix.log"; rm -f "$prefix.log"; exit 1; }
rm -f "$prefix.log"
for f in bin/bspkit include/bspkit/bsp.hpp include/bspkit/formats/quake1.hpp; do
  [ -f "$prefix/$f" ] || { echo "install: $f is missing under PREFIX"; exit 1; }
done
config=$(find "$prefix" -name bspkitConfig.cmake)
[ -n "$config" ] || { echo "install: no bspkitConfig.cmake under PREFIX"; exit 1; }
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ' | cut -c1-300)"

launcher=""
command -v ccache > /dev/null 2>&1 && launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
cmake -S "$src/tests/install/consumer" -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" $launcher \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" > "$prefix/configure.log" 2>&1 ||
  { cat "$prefix/configure.log"; exit 1; }
cmake --build "$prefix/consumer" > "$prefix/build.log" 2>&1 || { cat "$prefix/build.log"; exit 1; }

"$build/bspkit-sample" "$prefix/maps" > /dev/null
out=$("$prefix/consumer/consumer" "$prefix/maps/rooms.bsp")
echo "consumer: $out"
[ "$out" = "quake1 15" ] || { echo "consumer: expected 'quake1 15' (format id, lump count)"; exit 1; }
"$prefix/bin/bspkit" check "$prefix/maps/rooms.bsp"
echo "install test passed"
