# SPDX-License-Identifier: MIT
"""Builds tandem._tandem for `pip install --no-build-isolation ./python`.

Where tandem is found, first match wins:
  1. TANDEM_PREFIX=<prefix>: <prefix>/include and <prefix>/lib (an install of
     `cmake --install build --prefix <prefix>`);
  2. pkg-config tandem (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig);
  3. this source tree: ../include and ../build (after `make build`).
The extension gets an RPATH to that library folder. Vulkan headers
(libvulkan-dev) are needed at build time only; the CUDA driver is loaded at
run time and is never a dependency.
"""
import os
import shlex
import subprocess

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))


def locate():
    prefix = os.environ.get("TANDEM_PREFIX")
    if prefix:
        libdir = next(
            (os.path.join(prefix, d) for d in ("lib", "lib64", "lib/x86_64-linux-gnu")
             if os.path.exists(os.path.join(prefix, d, "libtandem.so"))),
            os.path.join(prefix, "lib"),
        )
        return [os.path.join(prefix, "include")], [libdir]
    try:
        cflags = subprocess.run(["pkg-config", "--cflags-only-I", "tandem"], check=True,
                                capture_output=True, text=True).stdout
        libs = subprocess.run(["pkg-config", "--libs-only-L", "tandem"], check=True,
                              capture_output=True, text=True).stdout
        return ([f[2:] for f in shlex.split(cflags)], [f[2:] for f in shlex.split(libs)])
    except (OSError, subprocess.CalledProcessError):
        pass
    tree = os.path.dirname(here)
    if os.path.exists(os.path.join(tree, "include", "tandem", "tandem.h")):
        return [os.path.join(tree, "include")], [os.path.join(tree, "build")]
    raise SystemExit("tandem not found: set TANDEM_PREFIX to its install prefix, or PKG_CONFIG_PATH")


include_dirs, library_dirs = locate()
setup(
    ext_modules=[
        Extension(
            "tandem._tandem",
            sources=["tandem/_tandem.c", "tandem/_errors.c", "tandem/_cuda.c"],
            include_dirs=include_dirs,
            library_dirs=library_dirs,
            runtime_library_dirs=library_dirs,
            libraries=["tandem", "dl"],
            define_macros=[("_GNU_SOURCE", "1")],
        )
    ],
)
