// The run settings, declared once.
//
// Every setting of a run — its command-line flag, its path in a scenario file,
// how its text is parsed and formatted, its default, its valid range and its
// help — is one row of one table. The CLI's options and --help, the scenario
// loader, per-value validation, the replay command and result.json's echo of
// the parameters are all generated from it, so they cannot drift apart (they
// had: a validation message once named a `--loss` flag that did not exist).
//
// Why text at the core: a value travels as text between every pair of places
// (flag -> config, config -> replay line, JSON -> config), and one parser per
// row means "what you typed", "what the file said" and "what the replay says"
// are read by the same code. The round trip parse(format(x)) == x is what makes
// a replay byte-identical, and is tested over the whole table.
//
// Two rows are lists: --fault (faults[]) and --param NAME=VALUE (params.NAME,
// checked by the algorithm's own spec). --ttl is an alias of --param ttl=.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run_config.h"

namespace locksim::harness {

struct Setting {
  // How a value is written, for JSON typing and for CLI flags without a value.
  enum class Kind {
    kText,     // a string in JSON: durations, ranges, choices
    kInteger,  // a JSON integer
    kNumber,   // a JSON number
    kFlag,     // a JSON boolean; on the command line a bare flag means true
    kList,     // repeatable (--fault): a JSON array of strings
    kParams,   // --param NAME=VALUE: the JSON object "params"
  };

  Setting(std::string flag, std::string json_path, Kind kind, std::string value_hint,
          std::string help, bool live)
      : flag(std::move(flag)),
        json_path(std::move(json_path)),
        kind(kind),
        value_hint(std::move(value_hint)),
        help(std::move(help)),
        live(live) {}

  std::string flag;       // "--replication-lag"
  std::string json_path;  // "redis.replication_lag" (dotted: object.key)
  Kind kind = Kind::kText;
  std::string value_hint;  // "DURATION", "N", "LO..HI", "none|rdb|..."
  std::string help;
  bool live = false;  // also an option of `locksim live`
  // Its meaning in `locksim live` when that differs from `help` (a live run
  // depends on real timing, so a seed there does not replay it); "" same.
  std::string live_help;

  // Parses `text` into `config`; throws ConfigError naming `field` (the flag
  // or the JSON path, as the user wrote it) for a malformed or out-of-range value.
  std::function<void(RunConfig& config, const std::string& text, const std::string& field)> parse;
  // The value as text that parse() reads back to the same value. Lists are
  // joined by format_items() instead.
  std::function<std::string(const RunConfig& config)> format;
  // For kList and kParams: the items, each as parse() takes it.
  std::function<std::vector<std::string>(const RunConfig& config)> items;
};

// The whole table, in the order --help, the replay command and result.json use.
const std::vector<Setting>& all_settings();

// The row with this flag ("--clients") or JSON path ("workload.clients"), or nullptr.
const Setting* find_setting_by_flag(std::string_view flag);
const Setting* find_setting_by_path(std::string_view json_path);

// Reads `text` into `config` by `setting`'s parse, as the user gave it (a
// flag's value, a scenario file's key), and records the setting in
// config.given_paths. The command line and the scenario loader read every
// value a user wrote through here; code that sets a value calls parse
// itself, so a time scale or a profile never counts as giving it.
void give_setting(const Setting& setting, RunConfig& config, const std::string& text,
                  const std::string& field);

// Whether the user asked for `setting` (RunConfig::given_paths): typed on
// the command line, whatever its value, or written in a scenario file at a
// value off its default. A file may list every setting (result.json's
// "params" reads back as one), so a key there at its default asks for
// nothing; a flag was typed, so it asks even then.
bool asks_for(const RunConfig& config, const Setting& setting);

// How an error names a setting of `config`: the flag for a command line, or
// "SOURCE: json.path" for a scenario file (config.source non-empty).
std::string field_name(const RunConfig& config, const Setting& setting);
// The same by JSON path (e.g. "redis.failover"); the path must be in the table.
std::string field_name(const RunConfig& config, std::string_view json_path);
// How a message names a setting inside its sentence, after field_name() has
// named the file at its front: the flag, or the bare JSON path.
std::string short_field_name(const RunConfig& config, std::string_view json_path);

// The backend whose section holds `setting` ("redis", "mysql", "zookeeper"),
// or "" for settings every run reads (workload, network, faults).
std::string backend_section(const Setting& setting);

// Whether `setting` is in another backend's section than `config`'s
// algorithm runs on ("redis.replicas" for mysql-center): the run never reads
// it. False for an unknown algorithm (its own row names it) and for settings
// every run reads (workload, network, faults).
bool belongs_to_other_backend(const Setting& setting, const RunConfig& config);

// Reads the settings in scenario JSON `j` (an object) into `config`, naming
// fields "SOURCE: path" (config.source must be set). A key that is neither a
// setting nor one of `other_top_keys` (the caller's own, e.g. "name") is an
// error, so a typo never silently runs a default.
void settings_from_json(const nlohmann::json& j, RunConfig& config,
                        const std::vector<std::string>& other_top_keys);

// Every setting of `config` as scenario-shaped JSON ({"duration": "60s",
// "workload": {"clients": 5, ...}, "redis": {...}, ...}): result.json's
// "params", readable back by settings_from_json.
nlohmann::ordered_json settings_to_json(const RunConfig& config);

// The one command line that replays `config`: algorithm and seed, then every
// setting whose value differs from the default, in table order.
std::string replay_command(const RunConfig& config);

// Quotes `text` for a POSIX shell when it needs it ('...' with ' escaped).
std::string shell_quote(const std::string& text);

}  // namespace locksim::harness
