#include "cli/margins_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/output_paths.h"
#include "cli/progress_line.h"
#include "env/assert.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/margin/margins.h"
#include "harness/margin/vary.h"
#include "harness/run.h"
#include "harness/settings.h"
#include "harness/sweep/sweep.h"
#include "reports/margins_report.h"
#include "reports/timeline_svg.h"

namespace locksim::cli {

namespace {

int jobs_of(const MarginsFlags& flags) {
  if (flags.jobs < 0 || flags.jobs > harness::margin::kMarginJobsMax) {
    throw ConfigError("--jobs: expected 1.." + std::to_string(harness::margin::kMarginJobsMax) +
                      ", got " + std::to_string(flags.jobs));
  }
  if (flags.jobs != 0) return flags.jobs;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// On a terminal only: one line redrawn per cell.
harness::margin::CellDoneFn progress_line(bool quiet) {
  if (quiet || !stderr_is_terminal()) return {};
  return [](size_t done, size_t total, const harness::margin::MarginCell& cell) {
    print_progress_line(
        "margins: " + std::to_string(done) + "/" + std::to_string(total) +
            " cells (last: " + cell.request.base.algorithm + " " + to_string(cell.request.kind) +
            (cell.vary_value.empty() ? "" : " " + cell.vary_param + "=" + cell.vary_value) + ")",
        true, false);
  };
}

// DIR/timelines/CELL.html for each table cell that broke: its above-the-edge
// run again, traced for the server lanes (the same config gives the same run).
void write_timelines(const std::filesystem::path& dir,
                     const std::vector<harness::margin::MarginCell>& cells,
                     const std::vector<harness::margin::MarginResult>& results) {
  std::filesystem::create_directories(dir / "timelines");
  harness::RunExtras extras;
  extras.trace_lock = true;
  for (size_t i = 0; i < cells.size(); ++i) {
    const harness::margin::MarginResult& m = results[i];
    if (!cells[i].vary_value.empty() || !m.above) continue;
    const harness::SimRunReport r = harness::simulate_and_check(m.above->config, extras);
    LOCKSIM_ASSERT_MSG(r.result.replay_command == m.above->replay_command,
                       "the timeline draws the run the table names");
    write_file_atomically(dir / reports::timeline_path(m), reports::timeline_page(r.result));
  }
}

}  // namespace

CLI::App* add_margins_command(CLI::App& app, MarginsFlags& flags) {
  CLI::App* m = app.add_subcommand(
      "margins",
      "the table of safety margins: every algorithm x every fault kind that applies, each "
      "with the algorithm's defaults, beside theory (margins.json, margins.md, margins.html)");
  m->add_option("--algorithms", flags.algorithms, "all, or a comma list (see locksim list)");
  m->add_option("--seed", flags.seed, "the seed of every cell (default 1)");
  m->add_option("--out", flags.out, "write margins.json, margins.md and margins.html here");
  m->add_option("--jobs", flags.jobs,
                "worker threads, one cell each, 1 to 256 (default: every core)")
      ->check(CLI::Range(1, 256));
  m->add_flag("--quiet", flags.quiet, "no progress line, no table on stdout");
  m->add_option("--vary", flags.vary,
                "also measure each cell the setting moves at 5 values from A to B and plot them "
                "beside theory: ttl, drift-factor or session-timeout")
      ->type_name("PARAM=A..B");
  return m;
}

namespace {

// The seed through the run table's --seed row: its range and its message.
uint64_t seed_of(const MarginsFlags& flags) {
  harness::RunConfig config;
  harness::find_setting_by_flag("--seed")->parse(config, flags.seed, "--seed");
  return config.seed;
}

}  // namespace

int run_margins_command(const MarginsFlags& flags) {
  const std::vector<std::string> algorithms =
      harness::parse_algorithm_list(flags.algorithms, "--algorithms");
  std::optional<harness::margin::Vary> vary;
  if (!flags.vary.empty()) vary = harness::margin::parse_vary(flags.vary);
  const std::vector<harness::margin::MarginCell> cells =
      harness::margin::plan_margins(algorithms, seed_of(flags), vary ? &*vary : nullptr);
  const int jobs = jobs_of(flags);
  make_out_dir(flags.out, "--out", {"margins.json", "margins.md", "margins.html"});
  const harness::margin::CellDoneFn progress = progress_line(flags.quiet);
  const StopOnInterrupt interrupt;
  std::vector<harness::margin::MarginResult> results;
  try {
    results = harness::margin::measure_margins(cells, jobs, progress, &stop_flag());
  } catch (const std::runtime_error&) {
    if (!stop_flag().load()) throw;
    std::cerr << "\nmargins: interrupted (" << interrupt_name() << "); nothing written\n";
    return interrupted_exit_code();
  }
  if (progress) std::cerr << "\n";
  const std::string markdown = reports::margins_markdown(cells, results);
  if (!flags.quiet) std::cout << markdown;
  if (!flags.out.empty()) {
    const std::filesystem::path dir(flags.out);
    write_file_atomically(dir / "margins.json", reports::margins_json_text(cells, results));
    write_file_atomically(dir / "margins.md", markdown);
    write_file_atomically(dir / "margins.html", reports::margins_html(cells, results));
    write_timelines(dir, cells, results);
    if (!flags.quiet) {
      std::cout << "wrote " << (dir / "margins.{json,md,html}").string() << " and "
                << (dir / "timelines").string() << "/\n";
    }
  }
  return kExitClean;
}

}  // namespace locksim::cli
