#!/bin/bash
# check_layers.sh - the cli's folders are layers; no file includes a header
# of a layer above its own (docs/DESIGN-NOTES.md, "Layout").
#
#   util < process < model (profile, census, memory) < link < symbolize
#        < views and formats (report, html) < session < cmd
#
# A file may include its own layer and any layer below. A new folder under
# cli/ must be given its layer here, or this check fails. Exit 0 or 1.
set -u
cd "$(dirname "$0")/.." || exit 1

layer_of() {
    case "$1" in
        util)                    echo 1 ;;
        process)                 echo 2 ;;
        profile|census|memory)   echo 3 ;;
        link)                    echo 4 ;;
        symbolize)               echo 5 ;;
        report|html)             echo 6 ;;
        session)                 echo 7 ;;
        cmd)                     echo 8 ;;
        *)                       echo "" ;;
    esac
}

bad=0
for f in $(find cli -name '*.[ch]' | sort); do
    dir=${f#cli/}
    dir=${dir%%/*}
    if [ "$dir" = "${f#cli/}" ]; then
        echo "check_layers: $f: files live in a layer folder, not in cli/ itself" >&2
        bad=1
        continue
    fi
    mine=$(layer_of "$dir")
    if [ -z "$mine" ]; then
        echo "check_layers: $f: folder cli/$dir has no layer (add it to scripts/check_layers.sh)" >&2
        bad=1
        continue
    fi
    while IFS=: read -r line inc; do
        to=${inc#cli/}
        to=${to%%/*}
        theirs=$(layer_of "$to")
        if [ -z "$theirs" ] || [ "$theirs" -gt "$mine" ]; then
            echo "check_layers: $f:$line includes $inc, a layer above cli/$dir/" >&2
            bad=1
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"cli/' "$f" |
             sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/')
done
[ $bad -eq 0 ] && echo "check_layers: no include goes up a layer"
exit $bad
