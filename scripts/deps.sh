#!/usr/bin/env bash
# deps.sh - install the Debian packages heapinject needs to build and test.
# As root: apt-get installs what is missing. Otherwise: print the command, fail.
set -u
need=()
have_hdr() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ]; }
have_hdr libunwind-ptrace.h        || need+=(libunwind-dev)
have_hdr libelf.h                  || need+=(libelf-dev)
have_hdr elfutils/libdwfl.h        || need+=(libdw-dev)
have_hdr criterion/criterion.h     || need+=(libcriterion-dev)
have_hdr zlib.h                    || need+=(zlib1g-dev)
have_hdr lz4frame.h                || need+=(liblz4-dev)     # apt's lists as Debian's container images keep them
have_hdr protobuf-c/protobuf-c.h   || need+=(libprotobuf-c-dev)
command -v protoc-c >/dev/null     || need+=(protobuf-c-compiler)  # profile.pb-c.[ch] are generated in the build
have_hdr libiberty/demangle.h      || need+=(libiberty-dev)   # C++ and Rust (legacy, v0) demangling
have_hdr jansson.h                 || need+=(libjansson-dev)  # reading JSON profiles
command -v gdb >/dev/null          || need+=(gdb)
command -v gcc >/dev/null          || need+=(gcc)
command -v g++ >/dev/null          || need+=(g++)
command -v make >/dev/null         || need+=(make)
command -v pkg-config >/dev/null   || need+=(pkg-config)
command -v python3 >/dev/null      || need+=(python3)
command -v strace >/dev/null       || need+=(strace)
command -v setpriv >/dev/null      || need+=(util-linux)
[ -e /usr/lib/x86_64-linux-gnu/libjemalloc.a ] || need+=(libjemalloc-dev)  # a target with jemalloc linked in
[ -e /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ] || need+=(libjemalloc2)  # jemalloc as a second allocator family (payload_jemalloc, mem_allocators)
[ -e /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 ] || need+=(libtcmalloc-minimal4)  # mem_allocators: tcmalloc preloaded
dpkg -s libc6-dbg >/dev/null 2>&1 || need+=(libc6-dbg)  # glibc's internal malloc symbols, for a unit test
command -v musl-gcc >/dev/null     || need+=(musl-tools)  # cli_musl: a musl program is refused with its own message
command -v node >/dev/null         || need+=(nodejs)      # cli_jit, census_dontfork: V8 (JIT code, a MADV_DONTFORK heap)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)  # svc_postgres, the service benchmark
command -v pgbench >/dev/null      || need+=(postgresql-client)  # the service benchmark drives PostgreSQL with pgbench
command -v nginx >/dev/null        || need+=(nginx)       # svc_nginx: a master with workers, reloaded mid-session
command -v gunicorn >/dev/null     || need+=(gunicorn)    # py_gunicorn: an arbiter and Python workers, recycled mid-session
for extra in "$@"; do               # extra packages a caller asks for (readers of formats)
    dpkg -s "$extra" >/dev/null 2>&1 || need+=("$extra")
done
[ "${#need[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
    # One install at a time: the e2e lanes ask for a format's reader
    # together (chromium and gnuplot-nox at once), and an apt-get that
    # finds dpkg's lock taken fails at once: ci1 skipped 9 tests so.
    # The other waits here, then finds the packages there, or waits for
    # dpkg's lock (another apt, say unattended-upgrades) up to 10 minutes.
    exec 9>/run/lock/heapinject-deps.lock 2>/dev/null && flock 9
    still=()
    for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || still+=("$p"); done
    [ "${#still[@]}" -eq 0 ] && exit 0
    need=("${still[@]}")
    echo "deps: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt=(apt-get -o DPkg::Lock::Timeout=600)
    if ! "${apt[@]}" install -y -q "${need[@]}" >/tmp/heapinject-apt.log 2>&1; then
        "${apt[@]}" update -q >>/tmp/heapinject-apt.log 2>&1
        "${apt[@]}" install -y -q "${need[@]}" >>/tmp/heapinject-apt.log 2>&1 || {
            echo "deps: apt-get install ${need[*]} failed; see /tmp/heapinject-apt.log" >&2; exit 1; }
    fi
else
    echo "deps: missing packages. Run as root:" >&2
    echo "    sudo apt-get install ${need[*]}" >&2
    exit 1
fi
