#!/bin/sh
# SPDX-License-Identifier: MIT
# install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR — installs BUILD_DIR into a
# fresh prefix under WORK_DIR, checks that nothing but tandem_* leaves the
# installed libraries (nm), then builds tests/install/consumer against it four
# ways (CMake find_package shared and static, pkg-config shared and static) and
# runs each, with consumer_vk (which calls the system's libvulkan itself beside
# tandem). Exit 77 (skip) when the consumer finds no device.
set -eu
build=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in lib/libtandem.so lib/libtandem.a include/tandem/tandem.h bin/tandem \
         lib/cmake/tandem/tandemConfig.cmake lib/cmake/tandem/tandemConfigVersion.cmake \
         lib/pkgconfig/tandem.pc; do
  [ -e "$prefix/$f" ] || { echo "install_test: $f was not installed" >&2; exit 1; }
done
"$prefix/bin/tandem" --version
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
  cc -o "$work/pc-static" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags tandem) \
     "$prefix/lib/libtandem.a" $(pkg-config --libs --static tandem | sed 's/-ltandem//')
  echo "pkg-config (static):"; run "pkg-config static" "$work/pc-static"
  cc -o "$work/pc-static-vk" "$src/tests/install/consumer/consumer_vk.c" $(pkg-config --cflags tandem) \
     "$prefix/lib/libtandem.a" $(pkg-config --libs --static tandem | sed 's/-ltandem//') -lvulkan
  echo "pkg-config (static), with the application's own Vulkan:"
  run "pkg-config static consumer_vk" "$work/pc-static-vk"
fi
[ $skipped = 1 ] && exit 77
exit 0
