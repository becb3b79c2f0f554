# Sourced by the perftest scripts. verbs_preload LIB sets PRELOAD, the
# LD_PRELOAD list that loads libbraid-verbs LIB into an uninstrumented
# binary (perftest, ibverbs-utils). A sanitizer build of LIB needs the ASan
# runtime loaded before everything else (ASan refuses to start otherwise:
# "ASan runtime does not come first in initial library list"), so its
# libasan goes first. LeakSanitizer is then turned off (ASAN_OPTIONS): the
# binaries leak small allocations of their own at exit, and any leak
# suppression that hid those would hide libbraid-verbs' too (its frames sit
# under theirs). The verbs tests (verbs_*_test), instrumented throughout,
# check libbraid-verbs for leaks.
verbs_preload() {
  local lib=$1 asan
  asan=$(ldd "$lib" 2>/dev/null | awk '/libasan/ { print $3; exit }')
  PRELOAD=$lib
  if [[ -n "$asan" ]]; then
    PRELOAD="$asan $lib"
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  fi
}
