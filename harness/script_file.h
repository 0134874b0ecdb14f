// Reading a script file (`--algorithm script:FILE.json`): a Redis lock given
// as data, turned into an algorithms::ScriptedLockDef and registered like any
// built-in algorithm (docs/how-to/script-a-lock.md has the format).
//
// Why here and not in algorithms/: validation compiles each Lua script with
// the simulated Redis's own interpreter and checks each command against its
// command table (sim/redis/), which algorithms/ may not include.
//
// Validation is up front and total: a file that loads runs the same in the
// simulation as against redis-server, as far as can be checked without
// running it. Every failure is a ConfigError of one line naming the file,
// the field (for Lua, the line) and what was expected:
//   malformed JSON, a missing or unknown field, a wrong type;
//   a Lua syntax error;
//   a command the simulated Redis does not implement (steps' commands, and
//     redis.call/redis.pcall with a literal name in scripts);
//   an unknown placeholder;
//   a reply pattern that cannot match what the command replies;
//   a parameter default that does not parse.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/scripted_lock.h"

namespace locksim::harness {

// Reads and validates `path` (or the built-in script of that path, when no
// such file exists); `name` is what the definition is called
// ("script:PATH"). Throws ConfigError as above.
std::shared_ptr<const algorithms::ScriptedLockDef> load_script_file(const std::string& path,
                                                                    const std::string& name);

// Parses `json_text` as the file `source`. Throws ConfigError as above.
std::shared_ptr<const algorithms::ScriptedLockDef> parse_script_file(const std::string& json_text,
                                                                     const std::string& source,
                                                                     const std::string& name);

// The FILE of an algorithm named "script:FILE", or nullopt for any other name.
std::optional<std::string> script_path_of(const std::string& algorithm);

// The bytes the loader reads for `path`: the file, else a shipped one's
// compiled-in copy (below). Throws ConfigError naming the path.
std::string script_file_text(const std::string& path);

// The shipped script files (examples/scripts/*.json), compiled in: a name
// "script:examples/scripts/X.json" that is not a file where locksim runs
// is read from here, so shipped scenarios naming one run from anywhere.
struct BuiltinScript {
  const char* path;  // "examples/scripts/reentrant-hash.json"
  const char* json;
};
const std::vector<BuiltinScript>& builtin_script_texts();

// Installs the loader of "script:PATH" names into the algorithm registry
// (algorithms::set_script_loader). Idempotent; call before parsing options.
void install_script_loader();

}  // namespace locksim::harness
