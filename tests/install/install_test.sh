#!/bin/sh
# SPDX-License-Identifier: MIT
# install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR — installs BUILD_DIR into a
# fresh prefix under WORK_DIR, checks that nothing but tandem_* leaves the
# installed libraries (nm), then builds tests/install/consumer against it four
# ways (CMake find_package shared and static, pkg-config tandem and
# tandem-static, the static ones checked by ldd to need no libtandem.so) and
# runs each, with consumer_vk (which calls the system's libvulkan itself beside
# tandem, and includes the installed tandem_vulkan.h). Exit 77 (skip) when the consumer finds no device.
set -eu
build=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in lib/libtandem.so lib/libtandem.a include/tandem/tandem.h include/tandem/tandem_vulkan.h \
         include/tandem/tandem_xrt.h bin/tandem \
         share/man/man1/tandem.1 share/man/man5/tandem-pipeline.5 share/doc/tandem/LICENSE share/doc/tandem/CHANGELOG.md \
         share/doc/tandem/README.md share/doc/tandem/docs/cli.md share/doc/tandem/docs/pipeline.md \
         lib/cmake/tandem/tandemConfig.cmake lib/cmake/tandem/tandemConfigVersion.cmake \
         lib/pkgconfig/tandem.pc lib/pkgconfig/tandem-static.pc; do
  [ -e "$prefix/$f" ] || { echo "install_test: $f was not installed" >&2; exit 1; }
done
"$prefix/bin/tandem" --version
# What --help points at is installed there.
"$prefix/bin/tandem" --help | grep -q 'share/doc/tandem/docs/' ||
  { echo "install_test: tandem --help does not name share/doc/tandem/docs/" >&2; exit 1; }
# Every installed header (tandem.h, the interop headers tandem_vulkan.h and
# tandem_xrt.h, and the emulated NPU's kernel ABI tandem_emu_kernel.h, for
# users who emulate their own NPU kernels) compiles on its own in C11 and C++.
sh "$src/tests/core/check_headers.sh" "$prefix/include" cc c++ \
   tandem.h tandem_vulkan.h tandem_xrt.h tandem_emu_kernel.h ||
  { echo "install_test: an installed header is missing or does not compile alone" >&2; exit 1; }
[ ! -e "$prefix/include/tandem/tandem_testing.h" ] ||
  { echo "install_test: the test-only tandem_testing.h was installed" >&2; exit 1; }
# A shared-only user needs no other package's .pc file (no Requires.private):
# pkg-config sees only tandem's here.
if ! PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" PKG_CONFIG_PATH= pkg-config --cflags --libs tandem; then
  echo "install_test: pkg-config tandem needs other packages' .pc files for a shared link" >&2; exit 1
fi
# Only the public API may leave the libraries: any other global symbol (volk's
# vk* function pointers, tandem__ internals) would bind in place of the
# application's own at link time.
for lib in libtandem.a libtandem.so; do
  opt=-g; [ $lib = libtandem.so ] && opt=-D
  leaked=$(nm $opt --defined-only "$prefix/lib/$lib" | awk 'NF == 3 { print $3 }' | grep -v '^tandem_[a-z]' || true)
  exported=$(nm $opt --defined-only "$prefix/lib/$lib" | awk 'NF == 3 { print $3 }' | grep -c '^tandem_[a-z]' || true)
  if [ -n "$leaked" ]; then
    echo "install_test: $lib defines global symbols other than tandem_*:" >&2
    echo "$leaked" | head -20 >&2
    exit 1
  fi
  [ "$exported" -gt 50 ] || { echo "install_test: $lib exports only $exported tandem_* symbols" >&2; exit 1; }
  echo "$lib: $exported global symbols, all tandem_*"
done
skipped=0
run() { # name, program
  set +e; "$2"; rc=$?; set -e
  if [ $rc = 77 ]; then skipped=1; elif [ $rc != 0 ]; then echo "install_test: $1 exited $rc" >&2; exit 1; fi
}
for kind in shared static; do
  flag=OFF; [ $kind = static ] && flag=ON
  cmake -S "$src/tests/install/consumer" -B "$work/cmake-$kind" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCONSUMER_STATIC=$flag > "$work/cmake-$kind.log"
  cmake --build "$work/cmake-$kind" >> "$work/cmake-$kind.log"
  if [ $kind = static ] && LD_LIBRARY_PATH="$prefix/lib" ldd "$work/cmake-$kind/consumer" | grep -F libtandem >&2; then
    echo "install_test: tandem::tandem_static linked libtandem.so" >&2; exit 1
  fi
  echo "find_package ($kind):"; run "find_package $kind" "$work/cmake-$kind/consumer"
  echo "find_package ($kind), with the application's own Vulkan:"
  run "find_package $kind consumer_vk" "$work/cmake-$kind/consumer_vk"
done
# tandem's .pc first, then wherever its dependencies' .pc files already are.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
if [ -n "${PKG_CONFIG_SYSROOT_DIR:-}" ]; then
  # The GPU machine unpacks the dependencies into a sysroot; pkg-config then
  # prefixes every path with it, tandem's temporary prefix too, which no .pc
  # file can avoid. The CMake consumers above still ran.
  echo "pkg-config: not tried: PKG_CONFIG_SYSROOT_DIR=$PKG_CONFIG_SYSROOT_DIR rewrites the paths of a package installed outside it"
else
  cc -o "$work/pc-shared" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags --libs tandem) \
     -Wl,-rpath,"$prefix/lib"
  echo "pkg-config (shared):"; run "pkg-config shared" "$work/pc-shared"
  # tandem-static.pc as it is, no editing of its flags: the program must not
  # need libtandem.so (ldd), even with the prefix's lib folder on the path.
  cc -o "$work/pc-static" "$src/tests/install/consumer/consumer.c" \
     $(pkg-config --cflags --libs --static tandem-static)
  if LD_LIBRARY_PATH="$prefix/lib" ldd "$work/pc-static" | grep -F libtandem >&2; then
    echo "install_test: pkg-config --static tandem-static linked libtandem.so" >&2; exit 1
  fi
  echo "pkg-config (static): no libtandem.so in ldd"; run "pkg-config static" "$work/pc-static"
  cc -o "$work/pc-static-vk" "$src/tests/install/consumer/consumer_vk.c" \
     $(pkg-config --cflags --libs tandem-static) -lvulkan
  if LD_LIBRARY_PATH="$prefix/lib" ldd "$work/pc-static-vk" | grep -F libtandem >&2; then
    echo "install_test: pkg-config tandem-static linked libtandem.so" >&2; exit 1
  fi
  echo "pkg-config (static), with the application's own Vulkan:"
  run "pkg-config static consumer_vk" "$work/pc-static-vk"
fi

# The installed tool with the emulated NPU, as a user has it: the prefix moved
# elsewhere (nothing may name where it was installed) and, where a private
# mount namespace is allowed, with the build and source folders gone.
for f in lib/libtandem_npu_emu.so.0 lib/tandem/libtandem_emu_kernels.so \
         lib/tandem/tandem_emu_kernels.xclbin share/tandem/examples/demo.json; do
  [ -e "$prefix/$f" ] || { echo "install_test: $f was not installed" >&2; exit 1; }
done
for f in bin/tandem lib/libtandem.so lib/libtandem_npu_emu.so.0 lib/tandem/libtandem_emu_kernels.so; do
  # Paths the program could use (strings, RPATH); debug info may name the build.
  if readelf -p .rodata -p .dynstr -d "$prefix/$f" 2>/dev/null | grep -F -e "$build" -e "$src" >&2; then
    echo "install_test: the installed $f names the build or source folder" >&2; exit 1
  fi
done
if grep -F -e "$build" -e "$src" "$prefix/lib/tandem/tandem_emu_kernels.xclbin" >&2; then
  echo "install_test: the installed xclbin names the build or source folder" >&2; exit 1
fi
moved=$(mktemp -d /tmp/tandem-install-test.XXXXXX)
trap 'rm -rf "$moved"' EXIT
cp -a "$prefix" "$moved/prefix"
rm -rf "$prefix"
printf '%s\n' 'set -e' "cd '$moved'" \
  "'$moved/prefix/bin/tandem' devices --npu emulated" \
  "'$moved/prefix/bin/tandem' run '$moved/prefix/share/tandem/examples/demo.json' --npu emulated --iterations 2 --validate --quiet" \
  'echo "installed tandem ran the demo on the emulated NPU"' > "$moved/run.sh"
set +e
if unshare -m true 2>/dev/null; then
  unshare -m sh -c "mount -t tmpfs none '$build' && mount -t tmpfs none '$src' &&
                    echo 'build and source folders hidden' && sh '$moved/run.sh'"
else
  echo "no private mount namespace here: the build folder stays, the prefix is moved"
  sh "$moved/run.sh"
fi
rc=$?
set -e
if [ $rc = 77 ]; then skipped=1; elif [ $rc != 0 ]; then
  echo "install_test: the installed tandem failed with the emulated NPU (exit $rc)" >&2; exit 1
fi
[ $skipped = 1 ] && exit 77
exit 0
