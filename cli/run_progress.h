// `run` and `explain` on a long run (hours of virtual time, many clients):
// a progress line on stderr while it runs, and Ctrl-C or SIGTERM cuts the
// run where it stands, so it is checked and written as it stands instead of
// lost. The simulation asks the poll between two events (harness::RunPoll);
// this side only reads the wall clock and the stop flag, so the events run
// up to the cut are those an uninterrupted run runs, byte for byte.
#pragma once

#include <cstdint>
#include <string>

#include "env/time.h"

namespace locksim::cli {

class RunProgress {
 public:
  // `duration`: the run's virtual length, for the share done. `quiet`: no line.
  RunProgress(Duration duration, bool quiet);

  // The run's poll: prints the line now and then (first after 2 s of wall
  // time, so a short run prints nothing; then on a terminal at most 5 times
  // a second, redrawn in place, and in a CI log every 5 s) and returns false
  // once SIGINT or SIGTERM came (cli/interrupt.h).
  bool poll(TimePoint now, uint64_t events);

  // Ends the redrawn line, if one was printed, so what follows starts clean.
  void finish();

  // "run: 2h 5m of 168h simulated (1.2 %), 84.1 M events in 41s; about 1h left"
  static std::string line(Duration done, Duration duration, uint64_t events, int64_t wall_ns);

 private:
  Duration duration_;
  bool quiet_;
  bool tty_;
  int64_t start_ns_;
  int64_t last_ns_ = 0;  // when the line was last printed; 0: never
};

}  // namespace locksim::cli
