#include "cli/margin_command.h"

#include <array>
#include <filesystem>
#include <iostream>

#include "cli/exit_codes.h"
#include "cli/output_paths.h"
#include "cli/progress_line.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/margin/margin.h"
#include "harness/margin/margins.h"
#include "harness/margin/vary.h"
#include "harness/prepared_run.h"
#include "reports/margin_report.h"
#include "reports/margins_vary.h"

namespace locksim::cli {

namespace {

// The default fixed hold: short beside the default 10 s lease, so the
// theory (ttl - hold) is most of the lease.
constexpr Duration kHoldDefault = Duration::seconds(2);

// Settings a margin run decides itself: one lone holder, a length that fits
// the range, exactly one fault, placed by the search. Kept as options, out
// of --help, so that giving one says why rather than "not expected".
constexpr std::array<const char*, 4> kDecidedFlags = {"--clients", "--duration", "--profile",
                                                      "--scenario"};

void refuse_decided(const CLI::App& margin) {
  for (const char* flag : kDecidedFlags) {
    if (margin.count(flag) > 0) {
      throw ConfigError(std::string(flag) +
                        ": decided by margin (one lone holder, one fault placed by the search)");
    }
  }
}

// On a terminal only: one line redrawn per run.
harness::margin::ProgressFn progress_line(bool quiet, harness::margin::Kind kind) {
  if (quiet || !stderr_is_terminal()) return {};
  return [kind](int probe, int64_t size, bool failed) {
    print_progress_line("margin: run " + std::to_string(probe) + ", size " +
                            harness::margin::format_size(kind, size) + ": " +
                            (failed ? "exposed" : "held"),
                        true, false);
  };
}

harness::margin::MarginRequest request_from(const CLI::App& margin, const MarginFlags& flags) {
  refuse_decided(margin);
  harness::RunConfig config = config_from_options(margin, Mode::kRun, flags.run, {"--fault"});
  if (margin.count("--hold") == 0) {
    config.workload.hold_min = kHoldDefault;
    config.workload.hold_max = kHoldDefault;
  }
  config.workload.clients = 1;
  const harness::margin::Kind kind = harness::margin::parse_kind(flags.fault, config.algorithm);
  harness::margin::refuse_given_it_sets(config, kind);
  // The algorithm, its parameters and every setting, named as typed.
  (void)harness::prepare_run(config);
  harness::margin::MarginRequest request;
  request.base = config;
  request.kind = kind;
  if (flags.range.empty()) {
    harness::margin::set_default_range(request);
  } else {
    const auto [lo, hi] = harness::margin::parse_range(flags.range, request.kind);
    request.range_lo = lo;
    request.range_hi = hi;
    request.range_given = true;
  }
  harness::margin::validate(request);  // before --out is created; measure_margin() asserts it too
  return request;
}

// --vary: the request at each value of the setting, as margins cells (the
// range redone for each lease unless --range gave one).
std::vector<harness::margin::MarginCell> vary_cells(const harness::margin::MarginRequest& request,
                                                    const MarginFlags& flags) {
  const harness::margin::Vary vary = harness::margin::parse_vary(flags.vary);
  harness::margin::check_vary_applies(vary, request.base.algorithm, request.kind);
  std::vector<harness::margin::MarginCell> cells;
  for (size_t i = 0; i < vary.values.size(); ++i) {
    harness::margin::MarginCell cell;
    cell.request = request;
    harness::margin::apply_vary(cell.request.base, vary.param, vary.values[i]);
    cell.request.varied = vary.param + "=" + vary.values[i];
    if (flags.range.empty()) harness::margin::set_default_range(cell.request);
    harness::margin::validate(cell.request);
    cell.vary_param = vary.param;
    cell.vary_value = vary.values[i];
    cell.vary_x = vary.xs[i];
    cells.push_back(std::move(cell));
  }
  return cells;
}

// margin.json with the points under "vary", and margin.html with their plot.
void write_vary(const std::filesystem::path& dir, const harness::margin::MarginResult& result,
                const std::vector<harness::margin::MarginCell>& cells,
                const std::vector<harness::margin::MarginResult>& points) {
  const std::string& param = cells.front().vary_param;
  nlohmann::ordered_json j = reports::margin_to_json(result);
  j["vary"] = reports::vary_json(param, cells, points);
  write_file_atomically(dir / "margin.json", j.dump(2) + "\n");
  write_file_atomically(dir / "margin.html",
                        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>locksim "
                        "margin</title></head><body>\n" +
                            reports::vary_html(param, cells, points) + "</body></html>\n");
}

}  // namespace

CLI::App* add_margin_command(CLI::App& app, MarginFlags& flags) {
  CLI::App* margin = app.add_subcommand(
      "margin",
      "find by bisection the smallest fault (a holder pause, a clock step or drift, a partition, "
      "a failover's lag, a crash's downtime, a delay) the lock does not survive, beside theory");
  add_run_options(*margin, Mode::kRun, flags.run);
  for (const char* flag : kDecidedFlags) margin->get_option(flag)->group("");  // out of --help
  margin->remove_option(margin->get_option("--fault"));
  std::string kinds;
  for (const harness::margin::Kind kind : harness::margin::all_kinds()) {
    kinds += (kinds.empty() ? "" : ", ") + std::string(harness::margin::to_string(kind));
  }
  margin
      ->add_option("--fault", flags.fault,
                   "the fault kind: " + kinds +
                       " (server-drift and server-clock-step: a quorum of the servers)")
      ->type_name("KIND")
      ->required();
  // What margin does with these differs from run's (its own file, its own
  // default hold): the help says so.
  margin->get_option("--out")->description("write margin.json and margin.html here");
  margin->get_option("--hold")
      ->description("the lone holder's fixed hold, e.g. 3s..3s")
      ->default_str("2s..2s");
  margin
      ->add_option("--range", flags.range,
                   "fault sizes searched: whole milliseconds (default: 0s to twice the lease), or "
                   "for a drift whole ppm (default: 0ppm..999999ppm)")
      ->type_name("LO..HI");
  margin
      ->add_option("--vary", flags.vary,
                   "also measure the margin at 5 values of a setting from A to B (ttl, "
                   "drift-factor, session-timeout); margin.json gets the points, margin.html "
                   "their plot beside theory")
      ->type_name("PARAM=A..B");
  return margin;
}

int run_margin_command(const CLI::App& margin, const MarginFlags& flags) {
  const harness::margin::MarginRequest request = request_from(margin, flags);
  std::vector<harness::margin::MarginCell> cells;
  if (!flags.vary.empty()) cells = vary_cells(request, flags);  // bad input before --out
  make_out_dir(flags.run.out, "--out", {"margin.json", "margin.html"});
  const harness::margin::ProgressFn progress = progress_line(flags.run.quiet, request.kind);
  const harness::margin::MarginResult result = harness::margin::measure_margin(request, progress);
  if (progress) std::cerr << "\n";
  if (!flags.run.quiet) std::cout << reports::margin_summary(result);
  if (!cells.empty()) {
    const std::vector<harness::margin::MarginResult> points =
        harness::margin::measure_margins(cells, 1);
    if (!flags.run.quiet)
      std::cout << reports::vary_markdown(cells.front().vary_param, cells, points);
    if (!flags.run.out.empty()) {
      write_vary(flags.run.out, result, cells, points);
      if (!flags.run.quiet) std::cout << "wrote " << flags.run.out << "/margin.{json,html}\n";
    }
    return kExitClean;
  }
  if (!flags.run.out.empty()) {
    const std::filesystem::path file = std::filesystem::path(flags.run.out) / "margin.json";
    write_file_atomically(file, reports::margin_json_text(result));
    if (!flags.run.quiet) std::cout << "wrote " << file.string() << "\n";
  }
  return kExitClean;
}

}  // namespace locksim::cli
