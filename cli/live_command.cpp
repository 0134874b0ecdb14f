#include "cli/live_command.h"

#include <filesystem>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "checkers/check.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/output_paths.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/run.h"
#include "history/history_io.h"
#include "live/live_run.h"
#include "live/owned_processes.h"
#include "reports/result_json.h"
#include "reports/summary_text.h"

namespace locksim::cli {

namespace {

// An earlier run's outputs go before this run starts, so that nothing in
// --out can pass for this run's (an interrupt, a crash of locksim).
void remove_stale_outputs(const std::string& out) {
  if (out.empty()) return;
  for (const std::string& name : kRunOutputs) {
    std::error_code ec;
    std::filesystem::remove(std::filesystem::path(out) / name, ec);
    if (ec)
      throw ConfigError("--out: cannot remove the earlier " + std::string(name) + ": " +
                        ec.message());
  }
}

// result.json; an interrupted run's says so first: {"interrupted": {signal, at_s}}.
std::string result_text(const harness::RunResult& r, int signal) {
  nlohmann::ordered_json j;
  if (signal != 0) {
    j["interrupted"] = interrupted_entry(signal, r.history.run_length.ns);
  }
  j.update(reports::result_to_json(r));
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void write_outputs(const std::string& out, const harness::RunResult& r, int signal) {
  const std::filesystem::path dir(out);
  write_file_atomically(dir / kRunOutputs[0], history::to_edn(r.history));
  write_file_atomically(dir / kRunOutputs[1], history::to_jsonl(r.history));
  write_file_atomically(dir / kRunOutputs[2], result_text(r, signal));
}

// On the interrupt watcher's thread: the run cut at the interrupt, judged
// and written. Never throws (the watcher exits after it either way).
void save_interrupted(const harness::RunConfig& config, const std::string& out, int signal) {
  try {
    const std::optional<harness::RunResult> r = live::interrupted_live_result(config);
    if (!r) {
      std::cerr << "live: interrupted before the run began; nothing to write\n";
      return;
    }
    if (!out.empty()) write_outputs(out, *r, signal);
    std::cerr << "live: interrupted (" << signal_name(signal) << ") at "
              << format_seconds(r->history.run_length.ns) << " of "
              << format_duration(config.duration)
              << "; verdict of what ran: " << checkers::to_string(checkers::merged(r->checks))
              << (out.empty() ? "" : "; wrote " + out + "/result.json (\"interrupted\")") << "\n";
  } catch (const std::exception& e) {
    std::cerr << "live: interrupted; could not write what ran: " << e.what() << "\n";
  }
}

// While alive, an interrupt saves what the run did (live/owned_processes.h).
class SaveOnInterrupt {
 public:
  SaveOnInterrupt(const harness::RunConfig& config, const std::string& out) {
    live::set_interrupt_save(
        [&config, &out](int signal) { save_interrupted(config, out, signal); });
  }
  ~SaveOnInterrupt() { live::set_interrupt_save(nullptr); }
  SaveOnInterrupt(const SaveOnInterrupt&) = delete;
  SaveOnInterrupt& operator=(const SaveOnInterrupt&) = delete;
};

}  // namespace

int run_live_command(const CLI::App& live, const RunOptions& o) {
  const harness::PreparedRun prepared =
      harness::prepare_run(config_from_options(live, Mode::kLive, o));
  const harness::RunConfig& config = prepared.config();
  live::check_live_run(config);  // before anything is printed or started
  make_out_dir(o.out, "--out", kRunOutputs);
  remove_stale_outputs(o.out);
  if (!o.quiet) {
    std::cout << "live: " << config.algorithm << " against real "
              << harness::backend_of(config).name << " on 127.0.0.1 for "
              << format_duration(config.duration) << " of real time...\n"
              << std::flush;
  }
  const harness::RunResult result = [&] {
    const SaveOnInterrupt save(config, o.out);
    return live::run_live_and_check(prepared);
  }();
  if (!o.quiet) std::cout << reports::summary_text(result);
  if (!o.out.empty()) {
    write_outputs(o.out, result, 0);
    if (!o.quiet) std::cout << "wrote " << o.out << "/result.json, history.edn, history.jsonl\n";
  }
  return exit_code(result.checks);
}

}  // namespace locksim::cli
