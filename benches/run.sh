#!/usr/bin/env bash
# The benchmarks of the Rust SDK (crate tvm-ffi) against the C++ API of libtvm_ffi:
# 1. call overhead (Rust and C++ programs calling runtime functions) and container reads;
# 2. tensors: `add_one` on 1,000,000 float32 from Python, Rust kernel against C++ kernel
#    (benches/tensor_add_one.py).
#
# Usage: bash benches/run.sh [ITERATIONS] [RUNS]
#   ITERATIONS  operations per timed run of the call benchmark (default 10000000)
#   RUNS        timed runs per operation inside each program (default 5)
#   BENCH_ROUNDS (env) how many times each program is run, interleaved C++/Rust (default 3)
#
#        bash benches/run.sh python [--rounds R] [--number N] [--no-build]
#   runs benches/python_call_overhead.py instead: Python calling Rust #[ffi_func] functions
#   and their C++ refl::GlobalDef twins, interleaved in one process.
#
# Builds benches/ (Rust, release) and benches/cpp/call_overhead.cc (g++ -O2), runs them
# interleaved (C++, Rust, C++, Rust, ...), keeps the best ns/op of each and prints a table;
# then runs the tensor benchmark with its defaults. See benches/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CONFIG="$ROOT/.venv/bin/tvm-ffi-config"
if [[ ! -x "$CONFIG" ]]; then
    echo "error: $CONFIG not found." >&2
    echo "Run \`bash scripts/setup.sh\` from the repository root first: it creates the" >&2
    echo "project-local .venv with the pinned wheel apache-tvm-ffi==0.1.15.post2." >&2
    exit 1
fi
INCLUDEDIR="$("$CONFIG" --includedir)"
DLPACK_INCLUDEDIR="$("$CONFIG" --dlpack-includedir)"
LIBDIR="$("$CONFIG" --libdir)"

if [[ "${1:-}" == "python" ]]; then
    shift
    exec "$ROOT/.venv/bin/python" "$ROOT/benches/python_call_overhead.py" "$@"
fi

ITERATIONS="${1:-10000000}"
RUNS="${2:-5}"
ROUNDS="${BENCH_ROUNDS:-3}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
RUST_BIN="$TARGET_DIR/release/call_overhead"
CPP_BIN="$TARGET_DIR/bench-cpp/call_overhead"

echo "== building Rust benchmark (cargo build --release -p tvm-ffi-benches)"
cargo build --release -p tvm-ffi-benches

echo "== building C++ benchmark ($CPP_BIN)"
mkdir -p "$(dirname "$CPP_BIN")"
g++ -O2 -std=c++17 -Wall -Wextra \
    -I"$INCLUDEDIR" -I"$DLPACK_INCLUDEDIR" \
    -DTVM_FFI_BENCH_LIBDIR="\"$LIBDIR\"" \
    "$ROOT/benches/cpp/call_overhead.cc" -o "$CPP_BIN" \
    -L"$LIBDIR" -ltvm_ffi -Wl,-rpath,"$LIBDIR" -ldl

# Operations both programs measure (the C++ one also prints call.*.expected references).
OPERATIONS=(call.add_one call.nop objectref.clone_drop object.new_drop field.rw_read)
# Container rows (benches/src/containers.rs, benches/cpp/containers.h), goal Rust/C++ <= 1.10.
CONTAINER_OPERATIONS=(map.get map.get_str map.get_small map.len map.iterate array.get array.iterate shape.build)
declare -A CPP_NS=() RUST_NS=()

# run_into TABLE BINARY: runs BINARY, echoes its output, and keeps the minimum ns/op of each
# operation in the associative array named TABLE.
run_into() {
    local -n table="$1"
    local output op ns
    output="$("$2" "$ITERATIONS" "$RUNS")"
    sed 's/^/   /' <<<"$output"
    while read -r op ns _; do
        [[ -z "$op" || "$op" == \#* ]] && continue
        if [[ -z "${table[$op]:-}" ]] || awk -v a="$ns" -v b="${table[$op]}" 'BEGIN { exit !(a < b) }'; then
            table[$op]="$ns"
        fi
    done <<<"$output"
}

for ((round = 1; round <= ROUNDS; round++)); do
    echo "== round $round/$ROUNDS: C++"
    run_into CPP_NS "$CPP_BIN"
    echo "== round $round/$ROUNDS: Rust"
    run_into RUST_NS "$RUST_BIN"
done

# row LABEL CPP_NS RUST_NS [GOAL]: one table line with the Rust/C++ ratio.
row() {
    local ratio
    ratio="$(awk -v r="$3" -v c="$2" 'BEGIN { printf "%.2f", r / c }')"
    printf '%-30s %8.2f %8.2f %9s%s\n' "$1" "$2" "$3" "$ratio" "${4:+  $4}"
}

# call_goal CPP_NS RUST_NS: the call goal, Rust/C++ <= 1.10, and whether it is met.
call_goal() {
    if awk -v r="$2" -v c="$1" 'BEGIN { exit !(r / c <= 1.10) }'; then
        echo "<= 1.10 (met)"
    else
        echo "<= 1.10 (NOT met)"
    fi
}

for op in "${OPERATIONS[@]}" call.add_one.expected call.nop.expected; do
    : "${CPP_NS[$op]:?missing C++ result for $op}"
done
for op in "${OPERATIONS[@]}"; do
    : "${RUST_NS[$op]:?missing Rust result for $op}"
done
for op in "${CONTAINER_OPERATIONS[@]}"; do
    : "${CPP_NS[$op]:?missing C++ result for $op}" "${RUST_NS[$op]:?missing Rust result for $op}"
done

echo
echo "Best of $ROUNDS rounds x $RUNS runs x $ITERATIONS iterations" \
    "($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-30s %8s %8s %9s  %s\n' "operation" "C++ ns" "Rust ns" "Rust/C++" "goal"
printf '%-30s %8s %8s %9s  %s\n' "---------" "------" "-------" "--------" "----"
for op in call.add_one call.nop; do
    row "$op" "${CPP_NS[$op]}" "${RUST_NS[$op]}" "$(call_goal "${CPP_NS[$op]}" "${RUST_NS[$op]}")"
done
row objectref.clone_drop "${CPP_NS[objectref.clone_drop]}" "${RUST_NS[objectref.clone_drop]}" \
    "inline atomics (Rust makes no library call)"
row object.new_drop "${CPP_NS[object.new_drop]}" "${RUST_NS[object.new_drop]}" \
    "allocation, deleter (deep graphs released iteratively), free"
row field.rw_read "${CPP_NS[field.rw_read]}" "${RUST_NS[field.rw_read]}" \
    "$(call_goal "${CPP_NS[field.rw_read]}" "${RUST_NS[field.rw_read]}") Rw<i64> read vs plain int64_t"
echo "reference: C++ CallExpected (no exceptions, enters through safe_call as Rust does):"
for op in call.add_one call.nop; do
    row "$op vs CallExpected" "${CPP_NS[$op.expected]}" "${RUST_NS[$op]}" ""
done

echo "containers (reads in place, as C++; Shape built in one allocation):"
for op in "${CONTAINER_OPERATIONS[@]}"; do
    row "$op" "${CPP_NS[$op]}" "${RUST_NS[$op]}" "$(call_goal "${CPP_NS[$op]}" "${RUST_NS[$op]}")"
done

echo
echo "== tensor benchmark (benches/tensor_add_one.py)"
"$ROOT/.venv/bin/python" "$ROOT/benches/tensor_add_one.py"
