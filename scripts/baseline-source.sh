# Sourced by the bench scripts when BASELINE=REV is set: lays commit REV's
# tree out in $target/baseline/src (git archive) for a side-by-side build,
# and sets base_src and base_rev. git archive stamps files with the
# commit's time, which can be older than the last baseline build, so cargo
# would take that build as fresh: a new revision's files are stamped now,
# and a revision already there is left as it was.
# Needs: $target (the cargo target dir) and $BASELINE.
base_src="$target/baseline/src"
base_rev=$(git rev-parse --short "$BASELINE")
if [ "$(cat "$target/baseline/rev" 2>/dev/null)" != "$base_rev" ]; then
  rm -rf "$base_src" && mkdir -p "$base_src"
  git archive "$BASELINE" | tar -x -m -C "$base_src"
  echo "$base_rev" >"$target/baseline/rev"
fi
