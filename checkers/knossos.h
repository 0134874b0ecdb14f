// Knossos, Jepsen's linearizability checker, as an outside referee: run as a
// subprocess on EDN history files, under a wall-clock limit and with its JVM
// heap bounded, its output parsed into valid / invalid / unknown.
//
// The command: locksim runs `COMMAND --algorithm wgl FILE...` through
// /bin/sh (so COMMAND may be several words). COMMAND must accept knossos.cli's
// options and print what knossos.cli prints for each file:
//   FILE<TAB>{analysis map, pretty-printed over several lines}
//   true | false | :unknown
// and check with the `mutex` model. ../shared/tools/knossos/knossos.sh does
// exactly that; so does `java -cp ... clojure.main -m knossos.cli --model mutex`
// with a Knossos of your own (docs/how-to/knossos.md).
//
// Why wgl: Knossos's default (`competition`) also races the `linear` search,
// which explodes on histories with :info ops.
//
// Never a locksim failure: a timeout, an out-of-memory JVM, a crash or
// unreadable output all become verdicts of kind kUnknown with the reason.
//
// Real time: this file measures and limits wall-clock time on purpose (it
// runs an outside program); scripts/check-determinism exempts it, as it does
// live/. Nothing here feeds back into a simulation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/time.h"
#include "checkers/mutex_checker.h"
#include "history/history.h"

namespace locksim::checkers {

struct KnossosOptions {
  std::string command;                          // see the top of this file
  Duration time_limit = Duration::seconds(60);  // for the whole call, all files together
  // The JVM's heap: exported as KNOSSOS_HEAP (knossos.sh's -Xmx) and as
  // -Xmx in JAVA_TOOL_OPTIONS (any other JVM), so a big history cannot eat
  // the machine. java's size syntax: 512m, 4g.
  std::string heap = "4g";
};

struct KnossosVerdict {
  Verdict::Kind kind = Verdict::Kind::kUnknown;
  // kInvalid: the op Knossos could not linearize, as it reports it; else -1.
  int64_t op_index = -1;
  // kUnknown: why there is no verdict ("timed out after 60s", "out of
  // memory (heap 4g)", "crashed (exit 255): ..."); empty otherwise.
  std::string why;
};

// One Knossos call over several files.
struct KnossosRun {
  std::vector<KnossosVerdict> verdicts;  // one per file, in the order given
  double seconds = 0;                    // wall clock of the whole call, JVM start included
  int64_t peak_rss_bytes = 0;            // the largest process of the call (the JVM)
  int exit_status = -1;                  // the command's, or 128+signal
  std::string stderr_tail;               // the last lines it printed on stderr
};

// Runs Knossos once over `files` (all readable EDN histories that keep
// Jepsen's rules: one history Knossos rejects makes it give up on the files
// after it). Blocks until it answers or the time limit passes; then kills its
// whole process group. Throws std::runtime_error only if no process can be
// started at all (fork/pipe failure); a command that does not exist is an
// unknown verdict ("exit 127").
KnossosRun run_knossos(const std::vector<std::string>& files, const KnossosOptions& options);

// Parses the command's stdout into one verdict per file (exposed for tests).
// `why_dead` ("" when the call ended normally) explains files left without an answer.
std::vector<KnossosVerdict> parse_knossos_output(const std::string& out,
                                                 const std::vector<std::string>& files,
                                                 const std::string& why_dead);

// The client ops of `ops` in the EDN Knossos's mutex model reads, one op map
// per line with their own :index: nemesis ops and locksim's extra fields left
// out, so Knossos judges exactly the ops the built-in checker judged.
std::string knossos_edn(const std::vector<history::Op>& ops);

// "1.2 GB", "310 MB", "0 B": memory for people.
std::string format_bytes(int64_t bytes);

}  // namespace locksim::checkers
