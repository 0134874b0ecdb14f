# Counting a program's instructions under callgrind, shared by
# scripts/instructions-per-event and scripts/instruction-ratio (sourced, not
# run). Instructions, not seconds: a busy machine does not move them.

# callgrind_run PREFIX COMMAND [ARG...]: runs COMMAND under callgrind, its
# standard output to PREFIX.out and its errors to PREFIX.err (valgrind's own
# log to PREFIX.vg, the profile to PREFIX.cg). Returns COMMAND's exit status.
callgrind_run() {
  local prefix=$1
  shift
  valgrind --tool=callgrind --log-file="$prefix.vg" --callgrind-out-file="$prefix.cg" \
    "$@" >"$prefix.out" 2>"$prefix.err"
}

# callgrind_total PREFIX: prints the instructions callgrind_run counted for
# PREFIX (the whole program's), or nothing if the profile has no total.
callgrind_total() {
  callgrind_annotate "$1.cg" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
