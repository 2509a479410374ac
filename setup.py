"""Builds the bspkit._bspkit extension with the project's CMake (target bspkit_python) and puts it
into the package. Configuration: BSPKIT_CMAKE_BUILD_DIR (default build/python-setup, reused between
builds; ccache applies), BSPKIT_CMAKE_ARGS (extra -D options), BSPKIT_JOBS (default: every core).
BSPKIT_PREBUILT_MODULE=path/_bspkit*.so packages a module already built instead (the ctest test of
the wheel uses the one `make build` made, so that it does not compile the library a second time)."""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        prebuilt = os.environ.get("BSPKIT_PREBUILT_MODULE")
        if prebuilt:
            shutil.copy2(prebuilt, target)
            return
        build_dir = Path(os.environ.get("BSPKIT_CMAKE_BUILD_DIR", ROOT / "build" / "python-setup"))
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DBSPKIT_TESTS=OFF", "-DBSPKIT_BENCH=OFF", "-DBSPKIT_PYTHON=ON",
                f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        args += shlex.split(os.environ.get("BSPKIT_CMAKE_ARGS", ""))
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build_dir), *args])
        jobs = os.environ.get("BSPKIT_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "bspkit_python", "-j", jobs])
        built = next((build_dir / "python" / "bspkit").glob("_bspkit*.so"))
        shutil.copy2(built, target)


setup(ext_modules=[Extension("bspkit._bspkit", sources=[])], cmdclass={"build_ext": CMakeBuild})
