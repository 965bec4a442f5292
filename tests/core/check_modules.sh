#!/bin/sh
# SPDX-License-Identifier: MIT
# check_modules.sh SOURCE_DIR CC NM OBJECT... — core's module map
# (docs/design.md, "The map"), checked (ctest test_core_modules, label
# "core"):
#   1. every core/*.h compiles alone, as the only include of a C11
#      translation unit, with -Wall -Wextra -Werror;
#   2. no core header includes a module's interface header (core/X.h beside
#      core/X.c), and no module's interface includes a layout (*_int.h):
#      interfaces name types through core/types.h, layouts and the basics
#      are what other headers include, so including one module's header
#      never pulls in another's calls or any fields;
#   3. core's files call each other only downwards: a file may call a
#      function another core file defines only when that file stands below it
#      in LAYERS (read from the objects with NM, so calls through the public
#      API count too). This is what keeps core free of circles; a new core
#      file is placed in LAYERS, and in the module map, by whoever adds it;
#   4. a layout is included only by the files READERS names for it.
# OBJECTs are the library's objects; those of core/*.c are read. Prints what
# breaks a rule.
set -u
src=$1; cc=$2; nm=$3; shift 3
status=0

# Bottom first; the groups are the module map's layers.
LAYERS="
status version fault struct_size registry budget glsl npu_emulated
node_kind access handle check
relay npu_lane lost wait lane runtime
npu kernel buffer graph adopt
slot trace_events tracker
plan handoff record
prepare exec_params map submit completion session interop trace
oneshot
"
# The basics, which any header may include.
BASICS="status struct_size registry fault types"

# 1. Each header alone.
for h in "$src"/core/*.h; do
  name=core/${h##*/}
  if ! printf '#include "%s"\n' "$name" | "$cc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
       -fsyntax-only -I"$src/include" -I"$src" -x c -; then
    echo "check_modules: $name does not compile alone" >&2
    status=1
  fi
done

# 2. Headers include no module's interface header, and a module's interface
#    (core/X.h beside core/X.c) includes no layout either: it names core's
#    types through core/types.h (forward declarations, as SQLite's btree.h
#    over btreeInt.h), so including a module's calls hands over no fields.
for h in "$src"/core/*.h; do
  name=${h##*/}
  module=0
  [ -f "$src/core/${name%.h}.c" ] && module=1
  for inc in $(sed -n 's|^#[[:space:]]*include[[:space:]]*"core/\([a-z_0-9]*\)\.h".*|\1|p' "$h"); do
    case " $BASICS " in *" $inc "*) continue ;; esac
    if [ -f "$src/core/$inc.c" ]; then
      echo "check_modules: core/$name includes core/$inc.h, a module's interface; include" \
           "the layout (*_int.h) it needs, or declare the type" >&2
      status=1
    fi
    case $inc in *_int)
      if [ $module = 1 ]; then
        echo "check_modules: core/$name, a module's interface, includes core/$inc.h; name the" \
             "type through core/types.h and include the layout in the .c files that read it" >&2
        status=1
      fi ;;
    esac
  done
done

# 4. Who may include which layout: the files that read its fields, named
#    here so that a new reader is a decision, not an accident. A file not
#    listed that includes a layout fails; read the fields through the
#    owner's calls, or add the file here (and say why in its commit).
READERS="
runtime_int: adopt.c budget.c buffer.c check.c completion.c exec_params.c graph.c handle.c handoff.c interop.c kernel.c lane.c lost.c map.c npu.c npu_lane.c oneshot.c plan.c prepare.c record.c relay.c runtime.c session.c slot.c submit.c trace.c trace_events.c tracker.c wait.c
buffer_int: access.c buffer.c exec_int.h exec_params.c graph.c handoff.c interop.c map.c npu.c npu_lane.c oneshot.c plan.c record.c session.c tracker.c
kernel_int: access.c exec_params.c graph.c kernel.c node_kind.c record.c
npu_int: access.c graph.c node_kind.c npu.c prepare.c
graph_int: access.c exec_int.h exec_params.c graph.c handoff.c map.c node_kind.c npu_lane.c plan.c plan_int.h prepare.c record.c session.c submit.c trace_events.c
plan_int: exec_int.h handoff.c lane.c lost.c npu_lane.c plan.c record.c relay.c trace_events.c
exec_int: check.c completion.c exec_params.c handle.c interop.c lane.c lost.c npu_lane.c prepare.c relay.c session.c slot.c submit.c trace_events.c tracker.c
"
for f in "$src"/core/*.c "$src"/core/*.h; do
  name=${f##*/}
  for inc in $(sed -n 's|^#[[:space:]]*include[[:space:]]*"core/\([a-z_0-9]*_int\)\.h".*|\1|p' "$f"); do
    list=$(echo "$READERS" | sed -n "s/^$inc: //p")
    case " $list " in
      *" $name "*) ;;
      *) echo "check_modules: core/$name includes core/$inc.h but is not among its readers" \
              "(READERS in tests/core/check_modules.sh)" >&2
         status=1 ;;
    esac
  done
done

# 3. Calls run down the layers.
rank() { # rank NAME: its position in LAYERS, or nothing
  echo "$LAYERS" | tr ' ' '\n' | grep -n -x "$1" | cut -d: -f1
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
seen=0
for o in "$@"; do
  case $o in */core/*.c.o | */core/*.c.obj) ;; *) continue ;; esac
  base=${o##*/}
  f=${base%%.c.*}
  r=$(rank "$f")
  if [ -z "$r" ]; then
    echo "check_modules: core/$f.c stands in no layer: add it to LAYERS here and to the module" \
         "map in docs/design.md" >&2
    status=1
    continue
  fi
  seen=$((seen + 1))
  "$nm" "$o" | awk -v f="$f" -v r="$r" '
    NF == 3 && $2 ~ /^[TDBRV]$/ { print "D", $3, f, r }
    NF == 2 && $1 == "U" { print "U", $2, f, r }' >>"$tmp"
done
if [ "$seen" -eq 0 ]; then
  echo "check_modules: no object of core/ among the arguments" >&2
  exit 1
fi
awk '
  $1 == "D" { owner[$2] = $3; rank[$2] = $4 }
  $1 == "U" { n++; sym[n] = $2; user[n] = $3; urank[n] = $4 }
  END {
    bad = 0
    for (i = 1; i <= n; i++) {
      s = sym[i]
      if (!(s in owner) || owner[s] == user[i]) continue
      if (rank[s] + 0 > urank[i] + 0) {
        printf "check_modules: core/%s.c calls %s of core/%s.c, which stands above it" \
               " in the layers\n", user[i], s, owner[s] > "/dev/stderr"
        bad = 1
      }
    }
    exit bad
  }' "$tmp" || status=1
[ $status = 0 ] && echo "check_modules: $seen core files; headers alone, layers kept"
exit $status
