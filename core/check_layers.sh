#!/usr/bin/env bash
# check_layers.sh — the Core's dependency rules (core/src/LAYERS), checked
# on the sources themselves:
#   1. a file in core/src/<L>/ includes a project header only as
#      "<M>/<file>.h" with M = L or a layer L may use, or as "<file>.h"
#      naming a file of its own folder; never a private header of another
#      layer;
#   2. no .c file declares a function prototype or an extern object that
#      another file defines (cross-file declarations live in headers);
#   3. every exported function (ZLINK_EXPORT) is defined in api/;
#   4. each layer's BUILD depends only on layers it may use, and
#      core/src/layers.bzl grants visibility exactly as the table says.
#
# The framework runtime (core/framework/, FW_DIR) stands above the Core and
# may reach it through the public ABI only:
#   5. a framework source (tests aside) includes, among project headers,
#      only "zlink.h" and its own files;
#   6. it names no zl_ symbol (comments aside): internal names are zf_;
#   7. its BUILD depends on nothing under //core/src.
#
# usage: check_layers.sh SRC_DIR [FW_DIR]      (SRC_DIR = core/src)
#        check_layers.sh --selftest SRC_DIR [FW_DIR]
# The self-test copies the tree, plants one violation of each rule and
# fails unless every planted copy is rejected and the clean copy passes.
set -uo pipefail

check() { # src_dir -> prints violations, returns 1 if any
    local src=$1 bad=0 layer uses rest
    declare -A allowed private
    declare -A only
    while read -r layer rest; do
        [[ -z "$layer" || "$layer" == \#* ]] && continue
        if [[ "$layer" == "only" ]]; then
            only[${rest%% *}]=" $(echo ${rest#* }) "
            continue
        fi
        uses=${rest%%private:*}
        allowed[$layer]=" $layer $(echo $uses) "
        private[$layer]=" $(echo ${rest#*private:}) "
    done <"$src/LAYERS"

    local f dir inc other file
    for f in $(cd "$src" && find . -name '*.[ch]' | sed 's@^\./@@' | sort); do
        dir=${f%%/*}
        if [[ -z "${allowed[$dir]+x}" ]]; then
            echo "$f: not in a layer listed in LAYERS"
            bad=1
            continue
        fi
        while IFS= read -r inc; do
            [[ "$inc" == "zlink.h" ]] && continue
            if [[ "$inc" == */* ]]; then
                other=${inc%%/*}
                file=${inc#*/}
                if [[ -z "${allowed[$other]+x}" ]]; then
                    echo "$f: includes \"$inc\": no layer \"$other\""
                    bad=1
                elif [[ "${allowed[$dir]}" != *" $other "* ]]; then
                    echo "$f: includes \"$inc\": layer $dir may not use $other"
                    bad=1
                elif [[ "$other" != "$dir" && "${private[$other]}" == *" $file "* ]]; then
                    echo "$f: includes \"$inc\": a private header of $other"
                    bad=1
                elif [[ ! -f "$src/$inc" ]]; then
                    echo "$f: includes \"$inc\": no such header"
                    bad=1
                elif [[ -n "${only[$inc]+x}" && "${only[$inc]}" != *" $dir "* ]]; then
                    echo "$f: includes \"$inc\": only${only[$inc]}may"
                    bad=1
                fi
            elif [[ ! -f "$src/$dir/$inc" ]]; then
                echo "$f: includes \"$inc\": not a file of $dir/ (write \"<layer>/$inc\")"
                bad=1
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src/$f")
        if [[ "$f" == *.c && "$dir" != "api" ]] && grep -q '^ZLINK_EXPORT' "$src/$f"; then
            echo "$f: defines an exported function outside api/"
            bad=1
        fi
        if [[ "$f" == *.c ]]; then
            # A prototype: a non-static declaration at file scope ending in
            # ");" on one line, or any extern declaration.
            local hits
            hits=$(grep -nE '^(extern[[:space:]]|[A-Za-z_][A-Za-z0-9_ \*]*[[:space:]\*]zl[a-z]*_[A-Za-z0-9_]*\([^;{]*\)[[:space:]]*;)' "$src/$f" |
                   grep -vE '^[0-9]+:(static|typedef|return)[[:space:]]')
            if [[ -n "$hits" ]]; then
                while IFS= read -r h; do
                    echo "$f:${h%%:*}: cross-file declaration in a .c file: ${h#*:}"
                done <<<"$hits"
                bad=1
            fi
        fi
    done

    local b dep
    for layer in "${!allowed[@]}"; do
        b="$src/$layer/BUILD"
        [[ -f "$b" ]] || { echo "$layer: no BUILD"; bad=1; continue; }
        for dep in $(grep -o '"//core/src/[a-z]*"' "$b" | tr -d '"' | sed 's@//core/src/@@'); do
            if [[ "${allowed[$layer]}" != *" $dep "* ]]; then
                echo "$layer/BUILD: depends on $dep, which $layer may not use"
                bad=1
            fi
        done
        # layers.bzl: "<dep>": [users...] must list exactly the layers
        # allowed to use dep.
        local want got u
        want=$(for u in "${!allowed[@]}"; do
                   [[ "$u" != "$layer" && "${allowed[$u]}" == *" $layer "* ]] && echo "$u"
               done | sort | tr '\n' ' ')
        got=$(sed -n "s/^[[:space:]]*\"$layer\": \[\(.*\)\],.*/\1/p" "$src/layers.bzl" |
              tr ',' '\n' | tr -d '" ' | sed '/^$/d' | sort | tr '\n' ' ')
        if [[ "$want" != "$got" ]]; then
            echo "layers.bzl: visibility of $layer is [$got], LAYERS says [$want]"
            bad=1
        fi
    done
    return $bad
}

check_framework() { # fw_dir -> prints violations, returns 1 if any
    local fw=$1 bad=0 f inc hits
    for f in $(cd "$fw" && find . -maxdepth 1 -name '*.[ch]' | sed 's@^\./@@' | sort); do
        while IFS= read -r inc; do
            [[ "$inc" == "zlink.h" ]] && continue
            if [[ "$inc" == */* || ! -f "$fw/$inc" ]]; then
                echo "framework/$f: includes \"$inc\": the framework sees the Core through zlink.h only"
                bad=1
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$fw/$f")
        hits=$(perl -0pe 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g' "$fw/$f" | grep -nE '\bzl_[A-Za-z0-9_]+' | head -n 3)
        if [[ -n "$hits" ]]; then
            while IFS= read -r h; do
                echo "framework/$f: names a Core-internal symbol: ${h#*:}"
            done <<<"$hits"
            bad=1
        fi
    done
    if grep -q '//core/src' "$fw/BUILD"; then
        echo "framework/BUILD: depends on the Core's layers (only //abi:headers and //core may be named)"
        bad=1
    fi
    return $bad
}

check_all() { # src_dir [fw_dir]
    local bad=0
    check "$1" || bad=1
    if [[ -n "${2:-}" ]]; then
        check_framework "$2" || bad=1
    fi
    return $bad
}

if [[ "${1:-}" == "--selftest" ]]; then
    src=$2
    fwsrc=${3:-}
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    fails=0
    plant() { # name, then a command run inside the copy; the copy must fail
        local name=$1
        shift
        rm -rf "$tmp/t" "$tmp/fw"
        cp -rL "$src" "$tmp/t"
        [[ -n "$fwsrc" ]] && cp -rL "$fwsrc" "$tmp/fw"
        (cd "$tmp/t" && "$@")
        if check_all "$tmp/t" ${fwsrc:+"$tmp/fw"} >"$tmp/out" 2>&1; then
            echo "selftest FAIL: planted $name was not caught"
            fails=$((fails + 1))
        else
            echo "selftest ok: planted $name caught: $(head -n 1 "$tmp/out")"
        fi
    }
    rm -rf "$tmp/t" "$tmp/fw" && cp -rL "$src" "$tmp/t"
    [[ -n "$fwsrc" ]] && cp -rL "$fwsrc" "$tmp/fw"
    if check_all "$tmp/t" ${fwsrc:+"$tmp/fw"} >"$tmp/out"; then
        echo "selftest ok: clean tree passes"
    else
        echo "selftest FAIL: clean tree rejected:"
        cat "$tmp/out"
        fails=$((fails + 1))
    fi
    plant "engine -> sock include" sed -i '1i #include "sock/socket.h"' engine/io.c
    plant "protocol -> engine include" sed -i '1i #include "engine/engine.h"' protocols/pair.c
    plant "msg -> engine include" sed -i '1i #include "engine/engine.h"' msg/queue.c
    plant "private header of another layer" sed -i '1i #include "engine/engine_int.h"' sock/ctx.c
    plant "socket internals in the facade" sed -i '1i #include "sock/sock_impl.h"' api/msg_api.c
    plant "unqualified header of another folder" sed -i '1i #include "socket.h"' poll/timer.c
    plant "prototype in a .c file" sed -i '$a int zl_socket_state(const void *s);' api/msg_api.c
    plant "extern in a .c file" sed -i '$a extern int zl_something;' sock/flow.c
    plant "export outside api/" sed -i '$a ZLINK_EXPORT int zlink_planted(void) { return 0; }' sock/flow.c
    plant "BUILD back-edge" sed -i 's@"//core/src/util",@"//core/src/util",\n        "//core/src/sock",@' engine/BUILD
    plant "visibility widened" sed -i 's@"engine": \["sock", "api"\]@"engine": ["sock", "protocols", "api"]@' layers.bzl
    if [[ -n "$fwsrc" ]]; then
        plant "framework includes a Core header" sed -i '1i #include "sock/socket.h"' ../fw/call.c
        plant "framework names a zl_ symbol" sed -i '$a static int f(void) { return zl_msg_size(0); }' ../fw/turn.c
        plant "framework BUILD reaches a layer" sed -i 's@"//abi:headers"\]@"//abi:headers", "//core/src/msg"]@' ../fw/BUILD
    fi
    [[ $fails -eq 0 ]] && echo "selftest: all planted violations caught"
    exit $((fails > 0))
fi

if check_all "${1:?usage: check_layers.sh SRC_DIR [FW_DIR]}" "${2:-}"; then
    echo "layering: ok"
else
    echo "layering: violations above (rules in core/src/LAYERS)"
    exit 1
fi
