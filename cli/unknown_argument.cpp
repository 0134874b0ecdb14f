#include "cli/unknown_argument.h"

#include <utility>

#include "harness/suggest.h"

namespace locksim::cli {

namespace {

// How many near names a message offers: enough for a typo, not a listing.
constexpr size_t kSuggestionsMax = 3;

const CLI::App* subcommand_named(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands(std::function<bool(const CLI::App*)>())) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

std::vector<std::string> flags_of(const CLI::App& command) {
  std::vector<std::string> out;
  for (const CLI::Option* o : command.get_options()) {
    for (const std::string& n : o->get_lnames()) out.push_back("--" + n);
    for (const std::string& n : o->get_snames()) out.push_back("-" + n);
  }
  return out;
}

// A flag, not a value: "-1" or "-5ms" after --ttl are values CLI11 has read.
bool looks_like_flag(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-') return false;
  const char c = arg[1] == '-' ? (arg.size() > 2 ? arg[2] : '\0') : arg[1];
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool takes_positionals(const CLI::App& command) {
  for (const CLI::Option* o : command.get_options()) {
    if (o->get_positional()) return true;
  }
  return false;
}

// `--quiet yes`: CLI11 reads a flag's value only after '=', and said "The
// following argument was not expected: yes", naming neither the flag nor the
// way to write it. Only where the command takes no positional argument,
// which the word could otherwise be.
std::string stray_flag_value(const std::string& flag, const std::string& value) {
  return flag + ": an on/off flag takes its value after '=', got '" + value + "' after a space (" +
         flag + ", or " + flag + "=false)";
}

std::string hint(const std::vector<std::string>& near, const std::string& otherwise) {
  const std::string maybe = harness::did_you_mean(near);
  return maybe.empty() ? " (" + otherwise + ")" : "; " + maybe;
}

}  // namespace

std::string unknown_argument_message(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* command = &app;
  std::string where = app.get_name().empty() ? "locksim" : app.get_name();
  const CLI::Option* bare_flag = nullptr;  // the argument before, an on/off flag without '='
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;  // everything after is positional
    const CLI::Option* flag_before = std::exchange(bare_flag, nullptr);
    if (flag_before != nullptr && command != &app && !looks_like_flag(arg) &&
        !takes_positionals(*command)) {
      return stray_flag_value(args[i - 1], arg);
    }
    if (command == &app && !looks_like_flag(arg)) {
      const CLI::App* sub = subcommand_named(app, arg);
      if (sub == nullptr) {
        std::vector<std::string> names;
        for (const CLI::App* s : app.get_subcommands(std::function<bool(const CLI::App*)>())) {
          names.push_back(s->get_name());
        }
        return arg + ": unknown command" +
               hint(harness::nearest_names(arg, names, kSuggestionsMax), "see locksim --help");
      }
      command = sub;
      where = "locksim " + arg;
      continue;
    }
    if (!looks_like_flag(arg)) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (const CLI::Option* o = command->get_option_no_throw(name)) {
      if (o->get_expected_max() == 0 && name == arg) bare_flag = o;
      continue;
    }
    // CLI11 would say "not expected" of `locksim run --version`.
    if (app.get_option_no_throw(name) != nullptr) {
      return name + ": a flag of locksim itself, not of " + where + " (locksim " + name + ")";
    }
    return name + ": unknown flag for " + where +
           hint(harness::nearest_names(name, flags_of(*command), kSuggestionsMax),
                "see " + where + " --help");
  }
  return "";
}

}  // namespace locksim::cli
