#!/usr/bin/env bash
# The declared runtime range, tested: one wheel of examples/point (built once, against the pinned
# apache-tvm-ffi of .venv) runs a smoke suite in a throwaway environment per apache-tvm-ffi
# release of the range `>=0.1.14,<0.2` that packages declare (the newest build of each release),
# and a release below it is refused at load with an error naming both versions.
# Environments and wheels live in target/runtime-range; releases come from PyPI once.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
in_range=(0.1.14.post0 0.1.14.post1 0.1.15.post1 0.1.15.post2)
# Its ABI version reads 0.1.14 like 0.1.14.post0's, but it lacks C functions the library links.
below=0.1.13.post3
work="$root/target/runtime-range"
mkdir -p "$work/wheelhouse"
python=.venv/bin/python
pip() { "$python" -m pip -q --disable-pip-version-check "$@"; }

for version in "${in_range[@]}" "$below"; do
  if ! ls "$work/wheelhouse"/apache_tvm_ffi-"$version"-*.whl >/dev/null 2>&1; then
    pip download --only-binary :all: "apache-tvm-ffi==$version" -d "$work/wheelhouse"
  fi
done

# Dev profile, its own target directory (TVM_FFI_LIBDIR fixed: the workspace build stays
# untouched and a second run reuses this one); the build backend, tvm-ffi-build, is the one
# scripts/setup.sh installs into .venv.
rm -rf "$work/dist"
CARGO_TARGET_DIR="$work/cargo" TVM_FFI_LIBDIR="$(.venv/bin/tvm-ffi-config --libdir)" \
  pip wheel --no-deps --no-build-isolation --config-settings profile=dev -w "$work/dist" \
  examples/point 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
wheel="$(ls "$work/dist"/my_ext-*.whl)"
# (hatchling writes the specifiers sorted: `<0.2,>=0.1.14`.)
grep -Eq '^Requires-Dist: apache-tvm-ffi(>=0.1.14,<0.2|<0.2,>=0.1.14)$' <(unzip -p "$wheel" '*.dist-info/METADATA') \
  || { echo "error: $wheel does not declare apache-tvm-ffi>=0.1.14,<0.2" >&2; exit 1; }

smoke='
import pickle, tvm_ffi, my_ext
p = my_ext.Point(3, label="a")
assert (p.x, p.y, p.label, p.norm2()) == (3, 7, "a", 58)
p.x = 4
q = pickle.loads(pickle.dumps(p))
assert type(q) is my_ext.Point and (q.x, q.y, q.label) == (4, 7, "a")
assert type(p.lift(2)) is my_ext.Point3 and p.lift(2).norm2_3d() == 69
try:
    my_ext.Interval(2.0, 1.0)
    raise AssertionError("no error")
except ValueError as err:
    assert str(err) == "empty interval: lo=2 > hi=1", err
assert my_ext.add(40, 2) == 42 and my_ext.apply_twice(lambda x: x * 3, 2) == 18
# Keyword syntax through the package'"'"'s generated functions (Python binds the keywords).
assert my_ext.add(40, b=2) == 42 and my_ext.Point(1).moved(1, dy=2).y == 9
assert my_ext.add.__name__ == "add" and my_ext.Interval(hi=2.0, lo=1.0).length() == 1.0
assert my_ext.Options(1).title == "untitled"
print(tvm_ffi.__version__)
'
# One environment per release: pip installs the wheel with the release, without an index; its
# declared range must admit the release.
venv() {
  local dir="$work/venv-$1"
  [ -x "$dir/bin/python" ] || "$python" -m venv --without-pip "$dir"
  echo "$dir/bin/python"
}
install() {
  pip --python "$1" install --no-index --find-links "$work/wheelhouse" --force-reinstall "${@:2}"
}
for version in "${in_range[@]}"; do
  start=$SECONDS
  py="$(venv "$version")"
  install "$py" "$wheel" "apache-tvm-ffi==$version"
  got="$(cd "$work" && "$py" -c "$smoke" 2>&1)" \
    || { echo "error: apache-tvm-ffi $version: the smoke suite failed:" >&2; echo "$got" >&2; exit 1; }
  [ "$got" = "$version" ] || { echo "error: apache-tvm-ffi $version: unexpected output: $got" >&2; exit 1; }
  echo "apache-tvm-ffi $version: ok ($((SECONDS - start))s)"
done

# Below the range: pip refuses the combination; forced, the import fails with the error.
py="$(venv "$below")"
# pip warns that the pair conflicts (the case under test): its output shows only on failure.
out="$(install "$py" "apache-tvm-ffi==$below" 2>&1 && install "$py" --no-deps "$wheel" 2>&1)" \
  || { echo "$out" >&2; exit 1; }
if got="$(cd "$work" && "$py" -c "import my_ext" 2>&1)"; then
  echo "error: apache-tvm-ffi $below: my_ext loaded outside the declared range" >&2
  exit 1
fi
for part in "ImportError: my_ext needs apache-tvm-ffi>=0.1.14,<0.2, but apache-tvm-ffi $below is installed"; do
  grep -qF "$part" <<<"$got" || {
    echo "error: apache-tvm-ffi $below: the error does not say \"$part\":" >&2; echo "$got" >&2; exit 1; }
done
echo "apache-tvm-ffi $below (below the range): refused at load, as expected"
