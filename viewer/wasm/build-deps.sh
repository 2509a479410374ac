#!/bin/sh
# Builds zlib, libpng and liblzma for WebAssembly (emcc) from Debian's SOURCE packages, into PREFIX
# (lib/libz.a, lib/libpng16.a, lib/liblzma.a, include/). Nothing is downloaded from outside Debian:
# `apt-get source --download-only` fetches the .dsc + tarballs (deb-src must be enabled: the Makefile's
# `viewer-deps` does it), `dpkg-source -x` unpacks them with Debian's patches applied.
# Header-only Debian packages the library compiles against (nlohmann-json3-dev, libstb-dev) are copied
# into PREFIX/include (the emscripten sysroot does not see /usr/include).
#   viewer/wasm/build-deps.sh BUILD_DIR      (PREFIX = BUILD_DIR/prefix, sources in BUILD_DIR/src)
# Idempotent: a library already in PREFIX is not rebuilt.
set -eu
# Debian's emscripten runs node on tools/acorn-optimizer.js, which needs node-acorn from /usr/share/nodejs
# (Debian's own nodejs looks there; a Node.js from elsewhere on PATH needs NODE_PATH).
export NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs
BUILD=$(mkdir -p "$1" && cd "$1" && pwd)
PREFIX=$BUILD/prefix
SRC=$BUILD/src
JOBS=${JOBS:-2}
CFLAGS_WASM="-O2"
mkdir -p "$PREFIX/lib" "$PREFIX/include" "$SRC"

# $1 = source package; prints the unpacked directory.
unpack() {
  cd "$SRC"
  dir=$(ls -d "$SRC"/"$2"-*/ 2>/dev/null | head -n 1 || true)
  if [ -z "$dir" ]; then
    ls "$1"_*.dsc >/dev/null 2>&1 || apt-get source --download-only "$1" >/dev/null 2>&1 ||
      { echo "apt-get source $1 failed (is deb-src enabled? make viewer-deps)" >&2; exit 1; }
    dpkg-source --no-check -x "$(ls "$1"_*.dsc | head -n 1)" >/dev/null
    dir=$(ls -d "$SRC"/"$2"-*/ | head -n 1)
  fi
  echo "${dir%/}"
}

# --- zlib --------------------------------------------------------------------
if [ ! -f "$PREFIX/lib/libz.a" ]; then
  Z=$(unpack zlib zlib)
  echo "wasm deps: zlib from $Z"
  mkdir -p "$BUILD/obj/zlib" && cd "$BUILD/obj/zlib"
  for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate inftrees trees uncompr zutil; do
    echo "$Z/$f.c"
  done | xargs -P "$JOBS" -I{} sh -c 'emcc '"$CFLAGS_WASM"' -DHAVE_UNISTD_H -c {} -o $(basename {} .c).o'
  emar rcs "$PREFIX/lib/libz.a" ./*.o
  cp "$Z/zlib.h" "$Z/zconf.h" "$PREFIX/include/"
fi

# --- libpng ------------------------------------------------------------------
if [ ! -f "$PREFIX/lib/libpng16.a" ]; then
  P=$(unpack libpng1.6 libpng1.6)
  echo "wasm deps: libpng from $P"
  cp "$P/scripts/pnglibconf.h.prebuilt" "$P/pnglibconf.h"
  mkdir -p "$BUILD/obj/png" && cd "$BUILD/obj/png"
  for f in png pngerror pngget pngmem pngpread pngread pngrio pngrtran pngrutil pngset pngtrans pngwio pngwrite pngwtran pngwutil; do
    echo "$P/$f.c"
  done | xargs -P "$JOBS" -I{} sh -c 'emcc '"$CFLAGS_WASM"' -I'"$PREFIX/include"' -c {} -o $(basename {} .c).o'
  emar rcs "$PREFIX/lib/libpng16.a" ./*.o
  cp "$P/png.h" "$P/pngconf.h" "$P/pnglibconf.h" "$PREFIX/include/"
fi

# --- liblzma -------------------------------------------------------------------
# The sources and feature macros of xz's own CMakeLists.txt (add_library(liblzma ...) and its
# add_compile_definitions list), compiled single-threaded (no MYTHREAD_*: the multithreaded
# coders are left out) -- its CMake configure needs Threads and a run of the big-endian test.
if [ ! -f "$PREFIX/lib/liblzma.a" ]; then
  X=$(unpack xz-utils xz-utils)
  echo "wasm deps: liblzma from $X"
  cd "$X"
  SOURCES=$(sed -n '/^add_library(liblzma/,/^)/p' CMakeLists.txt | grep -o 'src/[^ ]*\.c' |
            grep -v -e outqueue.c -e stream_encoder_mt.c -e stream_decoder_mt.c)
  FEATURES=$(sed -n '/# Features:/,/^)/p' CMakeLists.txt | grep -o '^ *HAVE_[A-Z0-9_]*' | sed 's/^ */-D/' | tr '\n' ' ')
  INCLUDES=""
  for d in api common check lz rangecoder lzma delta simple; do INCLUDES="$INCLUDES -Isrc/liblzma/$d"; done
  mkdir -p "$BUILD/obj/lzma"
  echo "$SOURCES" | xargs -P "$JOBS" -I{} sh -c 'emcc '"$CFLAGS_WASM $FEATURES $INCLUDES"' -Isrc/common \
    -DTUKLIB_SYMBOL_PREFIX=lzma_ -DHAVE_VISIBILITY=0 -DHAVE___BUILTIN_BSWAPXX -DHAVE_STDBOOL_H -DHAVE__BOOL \
    -DHAVE_STDINT_H -DHAVE_INTTYPES_H -DSIZEOF_SIZE_T=4 -c {} -o '"$BUILD/obj/lzma"'/$(echo {} | tr / _ | sed s/\\.c$/.o/)'
  emar rcs "$PREFIX/lib/liblzma.a" "$BUILD"/obj/lzma/*.o
  cp -r src/liblzma/api/lzma.h src/liblzma/api/lzma "$PREFIX/include/"
fi

# --- header-only Debian packages ---------------------------------------------
[ -d "$PREFIX/include/nlohmann" ] || cp -r /usr/include/nlohmann "$PREFIX/include/"
[ -d "$PREFIX/include/stb" ] || { mkdir -p "$PREFIX/include/stb" && cp /usr/include/stb/stb_image.h "$PREFIX/include/stb/"; }
echo "wasm deps: $PREFIX ready"
