// What every subcommand checks about where it will write, before it does any
// work: a path that cannot be written must not cost a whole run, sweep or
// search and then end as an internal error (issue 28). Also the CLI's one
// reading of the wall clock for progress lines and timings: the CLI layer owns
// real time, the simulation never sees it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace locksim::cli {

// Throws ConfigError naming `flag` ("--html: cannot write 'x': Permission
// denied") unless `path` is empty or a file this process can write: not a
// directory, and the file write_file_atomically writes first (PATH.tmp) can
// be opened, so a read-only file system or a missing directory shows here.
void check_writable_file(const std::string& path, const std::string& flag);

// The files a run writes in --out (run, explain, live), result.json last:
// a folder with a result.json holds a whole set of one run's.
inline const std::vector<std::string> kRunOutputs = {"history.edn", "history.jsonl", "result.json"};

// Creates the directory `dir` (and its parents) unless `dir` is empty. Throws
// ConfigError naming `flag` when it cannot.
void make_out_dir(const std::string& dir, const std::string& flag = "--out");

// make_out_dir, then check_writable_file for each of the files the command
// will write in `dir` (names, not paths), under `flag`: a folder where one
// of them goes is bad input at once, not an internal error after the work,
// and never a folder that removing an earlier output would take with it.
void make_out_dir(const std::string& dir, const std::string& flag,
                  const std::vector<std::string>& files);

// Nanoseconds on the steady clock, for progress lines and timings only.
int64_t wall_ns();

}  // namespace locksim::cli
