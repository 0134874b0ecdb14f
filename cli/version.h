// What `locksim --version` prints: one line naming the project's version,
// the commit the binary was built from (and whether the tree had changes),
// the compiler and the build type, for a bug report or a CI log to say which
// locksim ran. Written at build time by cmake/version_stamp.cmake; never part
// of a run's output, so two builds of one commit still write the same bytes.
#pragma once

namespace locksim::cli {

// E.g. "locksim 0.1.0 (commit e29f87e, 2026-11-30; GNU 12.2.0, Release)".
const char* version_line();

}  // namespace locksim::cli
