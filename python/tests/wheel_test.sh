#!/bin/sh
# ctest python_wheel: the packaging path of `make python-wheel` (pyproject.toml + setup.py) with the
# module `make build` made (BSPKIT_PREBUILT_MODULE), then pip install of the wheel into a temporary
# --target, import from there only, open a corpus map.
#   wheel_test.sh PYTHON SOURCE_DIR MODULE CORPUS
set -eu
PY=$1 SRC=$2 MOD=$3 CORPUS=$4
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC"
BSPKIT_PREBUILT_MODULE=$MOD "$PY" -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$TMP/wheel" . 2>&1
WHEEL=$(ls "$TMP"/wheel/bspkit-*.whl)
"$PY" -m pip install -q --no-deps --no-index --target "$TMP/site" "$WHEEL" 2>&1
cd "$TMP"
PYTHONPATH="$TMP/site" "$PY" - "$CORPUS" "$TMP/site" <<'PYEOF'
import os, sys
import bspkit
corpus, site = sys.argv[1], sys.argv[2]
assert bspkit.__file__.startswith(site), bspkit.__file__
for f in ("__init__.pyi", "survey.pyi", "py.typed"):
    assert os.path.exists(os.path.join(os.path.dirname(bspkit.__file__), f)), f
path = os.path.join(corpus, "q2_v38", "q2_base1.bsp")
if not os.path.isfile(path):
    sys.exit("corpus file missing: " + path)
bsp = bspkit.open(path)
assert bsp.format == "quake2" and bsp.entities[0]["classname"] == "worldspawn"
assert len(bsp.model().indices) > 0
print("wheel ok:", os.path.basename(os.environ.get("WHEEL", "")), bsp)
PYEOF
