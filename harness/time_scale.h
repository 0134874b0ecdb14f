// --time-scale F: every duration of a run multiplied by F, so a 60 s
// scenario runs live in 6 s (F = 0.1) and still compares with its
// simulation at the same scale (issue 25's `locksim agree`).
//
// "Every duration" is every setting of the settings table whose value,
// given or default, is a duration or a duration range (the run's length,
// holds, timeouts, a replication lag, a ZooKeeper tick), every algorithm
// parameter likewise (a TTL, a retry pause, Redisson's watchdog timeout),
// and every time in the fault schedule (when, for how long, by how much);
// but not a setting the run does not read (another backend's, or one whose
// parent is off: harness/setting_needs.h), which stays as it was.
// Each is rounded to whole milliseconds, at least 1 ms when it was not 0; one
// that was not whole milliseconds to begin with (the network's 200us
// latency) to whole microseconds, at least 1 us. A negative one (a clock
// step back) keeps its sign.
// What is not a setting does not scale: the constants of the simulated
// servers and of the real ones alike (Sentinel's 100 ms check, Redis's
// 100 ms expiry cycle, WAIT's 1 s, a keepalive), so both sides keep the same
// constants and a scaled scenario compares like with like; docs say which
// scenarios lean on one.
#pragma once

#include "harness/run_config.h"

namespace locksim::harness {

// Largest and smallest factors accepted: a run is not stretched past what a
// person waits for, nor squeezed below what a real server keeps up with.
inline constexpr double kTimeScaleMin = 0.01;
inline constexpr double kTimeScaleMax = 100.0;

// Parses "0.1" (a factor in [kTimeScaleMin, kTimeScaleMax]). Throws
// ConfigError naming `field`.
double parse_time_scale(const std::string& text, const std::string& field);

// Scales `config` in place (see above). Throws ConfigError naming the
// setting, parameter or fault whose scaled value is refused (a lock wait
// timeout below a whole second live, say). Precondition: factor in range.
void scale_time(RunConfig& config, double factor);

}  // namespace locksim::harness
