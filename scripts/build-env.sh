# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/setup.sh and scripts/test.sh: a compiler cache in front of every build where
# ccache is installed (scripts/install-deps.sh installs it), shared by build folders and clones
# (paths taken relative to the repository, so that build/, build-asan/ and the consumer tests'
# builds of one source hit the same entries), and a timer for each stage.
# use_compiler_cache: sets `launcher` to CMake's flags for ccache, where it is installed (call it
# after scripts/install-deps.sh).
launcher=()
use_compiler_cache() {
  if command -v ccache > /dev/null 2>&1; then
    export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
}

stage_times=()
stage_start=$SECONDS
# stage NAME: ends the stage running since the last call (or the start), and names it.
stage() {
  stage_times+=("$(printf '%5d s  %s' $((SECONDS - stage_start)) "$1")")
  stage_start=$SECONDS
}
# The stages' times, the longest first.
print_stage_times() {
  echo
  echo "time by stage (total $SECONDS s):"
  printf '%s\n' "${stage_times[@]}" | sort -rn
}
