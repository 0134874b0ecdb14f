#include "harness/script_file.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/registry.h"
#include "env/parse.h"
#include "harness/run_config.h"
#include "harness/strict_json.h"
#include "sim/redis/lua_scripting.h"
#include "sim/redis/server.h"

namespace locksim::harness {

namespace {

using Json = nlohmann::json;
using algorithms::ReplyPattern;
using algorithms::ScriptStep;

// A file of more is not a lock: a bound on what one load reads.
constexpr size_t kFileBytesMax = 1 << 20;
// As many masters as a run may build (--masters' bound): a file asking for
// more loaded, then broke an invariant when the run built its deployment.
constexpr int64_t kMastersMax = RunConfig::kRedisMastersMax;

// Names a field of the file in an error: "FILE: acquire.script".
struct Where {
  std::string file;
  std::string field;
  Where at(const std::string& sub) const { return {file, field.empty() ? sub : field + "." + sub}; }
  Where index(size_t i) const { return {file, field + "[" + std::to_string(i) + "]"}; }
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(file + ": " + field + ": " + what);
  }
};

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The keys `object` may have; anything else is a typo, rejected.
void only_keys(const Json& object, const Where& w, const std::set<std::string>& allowed) {
  if (!object.is_object()) w.fail("expected an object");
  for (const auto& [key, value] : object.items()) {
    if (allowed.count(key) == 0) {
      std::string names;
      for (const std::string& a : allowed) names += (names.empty() ? "" : ", ") + a;
      w.at(key).fail("unknown field (expected one of: " + names + ")");
    }
  }
}

std::string text_of(const Json& v, const Where& w) {
  if (!v.is_string()) w.fail("expected a string");
  return v.get<std::string>();
}

// Every brace in `text` must belong to a placeholder scripted_lock.h knows:
// "{ token }", "{}" or "{{token}}" were sent as literal text (a typo that
// gave every client the same "token", and the history still showed each
// client's own).
void check_placeholders(const std::string& text, const Where& w) {
  const auto& names = algorithms::placeholder_names();
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : " ") + n;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '}') w.fail("a '}' that closes no placeholder (expected one of " + known + ")");
    if (text[i] != '{') {
      ++i;
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) {
      w.fail("a '{' that is never closed (expected one of " + known + ")");
    }
    const std::string name = text.substr(i, close - i + 1);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      w.fail("unknown placeholder " + name + " (expected one of " + known + ")");
    }
    i = close + 1;
  }
}

std::vector<std::string> strings_of(const Json& v, const Where& w) {
  if (!v.is_array()) w.fail("expected an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    out.push_back(text_of(v[i], w.index(i)));
    check_placeholders(out.back(), w.index(i));
  }
  return out;
}

// "OK" (a status), "nil", a whole number, or an object: {"status": "OK"},
// {"integer": 1}, {"nil": true}, {"bulk": "{token}"}, each with an optional
// "element": N for an array reply.
ReplyPattern parse_pattern(const Json& v, const Where& w) {
  ReplyPattern p;
  if (v.is_string()) {
    p.text = v.get<std::string>();
    p.kind = p.text == "nil" ? ReplyPattern::Kind::kNil : ReplyPattern::Kind::kStatus;
    if (p.text.empty()) w.fail("expected a status text such as \"OK\", got \"\"");
    return p;
  }
  if (v.is_number_integer()) {
    p.kind = ReplyPattern::Kind::kInteger;
    p.integer = v.get<int64_t>();
    return p;
  }
  if (!v.is_object()) w.fail("expected \"OK\", \"nil\", a whole number or an object");
  only_keys(v, w, {"status", "integer", "nil", "bulk", "element"});
  const int kinds = static_cast<int>(v.contains("status") + v.contains("integer") +
                                     v.contains("nil") + v.contains("bulk"));
  if (kinds != 1) w.fail("expected exactly one of status, integer, nil, bulk");
  if (v.contains("element")) {
    if (!v["element"].is_number_unsigned()) w.at("element").fail("expected a whole number >= 0");
    p.element = v["element"].get<size_t>();
  }
  if (v.contains("status")) {
    p.text = text_of(v["status"], w.at("status"));
  } else if (v.contains("integer")) {
    if (!v["integer"].is_number_integer()) w.at("integer").fail("expected a whole number");
    p.kind = ReplyPattern::Kind::kInteger;
    p.integer = v["integer"].get<int64_t>();
  } else if (v.contains("nil")) {
    if (v["nil"] != true) w.at("nil").fail("expected true");
    p.kind = ReplyPattern::Kind::kNil;
  } else {
    p.kind = ReplyPattern::Kind::kBulk;
    p.text = text_of(v["bulk"], w.at("bulk"));
    check_placeholders(p.text, w.at("bulk"));
  }
  return p;
}

// The reply kinds a command of the simulated Redis can give besides errors,
// for "a pattern that cannot match". Empty: not known, not checked.
std::set<ReplyPattern::Kind> reply_kinds(const std::vector<std::string>& argv) {
  using K = ReplyPattern::Kind;
  static const std::set<std::string> integers = {
      "setnx", "del",   "exists", "expire", "pexpire", "expireat", "pexpireat", "persist", "ttl",
      "pttl",  "incr",  "decr",   "incrby", "dbsize",  "hincrby",  "hexists",   "hdel",    "hset",
      "hlen",  "rpush", "lrem",   "llen",   "zcard",   "zrem",     "publish",   "wait"};
  const std::string name = lowercase(argv.front());
  if (integers.count(name) != 0) return {K::kInteger};
  if (name == "get" || name == "getset" || name == "hget" || name == "lindex" || name == "zscore") {
    return {K::kBulk, K::kNil};
  }
  if (name == "set") {
    for (const std::string& a : argv) {
      if (lowercase(a) == "get") return {K::kBulk, K::kNil, K::kStatus};
    }
    return {K::kStatus, K::kNil};
  }
  return {};
}

void check_pattern_can_match(const ScriptStep& step, const Where& w) {
  if (step.command.empty()) return;  // a script can return anything
  // reply_kinds knows the commands that reply with one value; any other
  // (LRANGE, ZRANGE, MGET, ...) may reply with an array, and is not judged.
  const auto kinds = reply_kinds(step.command);
  if (kinds.empty()) return;
  if (step.success.element) {
    w.fail("element " + std::to_string(*step.success.element) +
           " cannot match: " + step.command.front() + " does not reply with an array");
  }
  const bool ok = kinds.count(step.success.kind) != 0 &&
                  (step.success.kind != ReplyPattern::Kind::kStatus || step.success.text == "OK");
  if (!ok) {
    w.fail("cannot match: " + step.command.front() +
           " never replies so (expected a pattern for its reply: " +
           (kinds.count(ReplyPattern::Kind::kInteger) != 0 ? "an integer" : "OK, nil or a bulk") +
           ")");
  }
}

// The level of a Lua long bracket opening at `at` ("[[" 0, "[==[" 2), or -1.
int long_bracket_at(const std::string& s, size_t at) {
  if (at >= s.size() || s[at] != '[') return -1;
  size_t i = at + 1;
  while (i < s.size() && s[i] == '=') ++i;
  return i < s.size() && s[i] == '[' ? static_cast<int>(i - at - 1) : -1;
}

// Which characters of Lua source `body` are code: not inside a comment or a
// string literal. The command-name scan reads only calls that start in code:
// a `redis.call('sadd')` inside a comment or a string ran nothing, yet was
// refused as an unknown command.
std::vector<bool> code_mask(const std::string& body) {
  std::vector<bool> code(body.size(), true);
  size_t i = 0;
  auto blank_until = [&](size_t end) {
    for (; i < end && i < body.size(); ++i) code[i] = false;
  };
  while (i < body.size()) {
    const char ch = body[i];
    const bool comment = body.compare(i, 2, "--") == 0;
    const size_t open = comment ? i + 2 : i;
    const int level = long_bracket_at(body, open);
    if (level >= 0) {  // a long string or a long comment: to its closing bracket
      const std::string close = "]" + std::string(static_cast<size_t>(level), '=') + "]";
      const size_t end = body.find(close, open);
      blank_until(end == std::string::npos ? body.size() : end + close.size());
    } else if (comment) {
      const size_t end = body.find('\n', i);
      blank_until(end == std::string::npos ? body.size() : end);
    } else if (ch == '\'' || ch == '"') {
      size_t j = i + 1;
      while (j < body.size() && body[j] != ch && body[j] != '\n') j += body[j] == '\\' ? 2 : 1;
      blank_until(j + 1);
    } else {
      ++i;
    }
  }
  return code;
}

// Compiles `body` with the simulated Redis's Lua (nothing runs) and checks
// every redis.call/redis.pcall whose command name is a literal: in code (not
// a comment or a string) and not the first part of a concatenation
// (`'S'..'ET'`, left to run time as any name that is not a literal).
void check_lua(const std::string& body, const Where& w) {
  sim::redis::LuaScripting lua;
  const auto loaded = lua.load(body);
  if (loaded.error) {
    // "ERR Error compiling script (new function): user_script:3: '=' expected near 'x'"
    static const std::regex where_line(R"(user_script:(\d+): (.*))");
    std::smatch m;
    const std::string& msg = loaded.error->text;
    if (std::regex_search(msg, m, where_line)) {
      w.fail("line " + m[1].str() + ": Lua syntax error: " + m[2].str());
    }
    w.fail("Lua syntax error: " + msg);
  }
  static const std::regex call(R"(redis\s*\.\s*p?call\s*\(\s*(['"])([^'"]*)\1(\s*\.\.)?)");
  const std::vector<bool> code = code_mask(body);
  std::istringstream lines(body);
  std::string line;
  size_t line_start = 0;
  for (int n = 1; std::getline(lines, line); ++n, line_start += line.size() + 1) {
    for (std::sregex_iterator it(line.begin(), line.end(), call), end; it != end; ++it) {
      if (!code[line_start + static_cast<size_t>(it->position())] || (*it)[3].matched) continue;
      const std::string command = (*it)[2].str();
      if (sim::redis::Server::implements(lowercase(command), true)) continue;
      // EVAL and the like: implemented, but Redis refuses them inside a script.
      if (sim::redis::Server::implements(lowercase(command), false)) {
        w.fail("line " + std::to_string(n) + ": redis command '" + command +
               "' is not allowed from a script (Redis refuses it there too)");
      }
      w.fail("line " + std::to_string(n) + ": redis command '" + command +
             "' is not implemented by the simulated Redis (see "
             "docs/how-to/script-a-lock.md for the list)");
    }
  }
}

ScriptStep parse_step(const Json& v, const Where& w, const std::string& refused, bool with_fence) {
  std::set<std::string> keys = {"command", "script", "keys", "args", "success", "refused"};
  if (with_fence) keys.insert("fence");
  only_keys(v, w, keys);
  ScriptStep s;
  if (v.contains("command") == v.contains("script")) w.fail("expected one of command, script");
  if (v.contains("command")) {
    if (v.contains("keys") || v.contains("args")) w.fail("keys and args go with a script");
    s.command = strings_of(v["command"], w.at("command"));
    if (s.command.empty()) w.at("command").fail("expected the command and its arguments");
    if (!sim::redis::Server::implements(lowercase(s.command.front()), false)) {
      w.at("command").fail("'" + s.command.front() + "' is not implemented by the simulated Redis");
    }
  } else {
    s.script = text_of(v["script"], w.at("script"));
    check_lua(s.script, w.at("script"));
    if (v.contains("keys")) s.keys = strings_of(v["keys"], w.at("keys"));
    if (v.contains("args")) s.args = strings_of(v["args"], w.at("args"));
  }
  if (!v.contains("success")) w.at("success").fail("missing (expected a reply pattern)");
  s.success = parse_pattern(v["success"], w.at("success"));
  check_pattern_can_match(s, w.at("success"));
  s.refused = v.contains("refused") ? text_of(v["refused"], w.at("refused")) : refused;
  return s;
}

std::optional<size_t> parse_fence(const Json& step, const ScriptStep& s, const Where& w) {
  if (!step.contains("fence")) return std::nullopt;
  const Where f = w.at("fence");
  only_keys(step["fence"], f, {"element"});
  if (!step["fence"].contains("element") || !step["fence"]["element"].is_number_unsigned()) {
    f.at("element").fail("expected a whole number >= 0 (the reply element holding the fence)");
  }
  if (!s.command.empty() && !reply_kinds(s.command).empty()) {
    f.fail("cannot be read: " + s.command.front() + " does not reply with an array");
  }
  return step["fence"]["element"].get<size_t>();
}

// The parameters a file has: the common ones, then those its steps need;
// "params" in the file gives their defaults.
std::vector<algorithms::ParamInfo> parse_params(const Json& file,
                                                const algorithms::ScriptedLockDef& d,
                                                const Where& w) {
  std::vector<algorithms::ParamInfo> params = {
      {"ttl", "10s", "lock expiry: {ttl_ms} and {ttl_s} in the steps"},
      {algorithms::kMaxAttemptsParam, "20", "acquire attempts before giving up"},
      {algorithms::kRetryParam, "50ms..150ms", "random backoff between attempts, uniform"},
  };
  if (d.masters > 1) {
    params.push_back({"quorum", "auto", "masters that must agree: auto (N/2+1) or 1 to N"});
    params.push_back(
        {"drift-factor", "0.01", "validity = ttl - elapsed - (ttl * drift-factor + 2ms)"});
  }
  if (d.expire) params.push_back({"expire-delay", "0s", "pause before the expire step"});
  if (d.renew)
    params.push_back({"renew-period", "", "the watchdog runs the renew step this often"});
  const Where pw = w.at("params");
  if (file.contains("params")) {
    const Json& given = file["params"];
    if (!given.is_object()) pw.fail("expected an object of parameter defaults");
    for (const auto& item : given.items()) {
      const std::string key = item.key();
      const Json& value = item.value();
      auto it = std::find_if(params.begin(), params.end(),
                             [&](const algorithms::ParamInfo& p) { return p.name == key; });
      if (it == params.end()) {
        std::string names;
        for (const auto& p : params) names += (names.empty() ? "" : ", ") + p.name;
        pw.at(key).fail("not a parameter of this file (it has: " + names + ")");
      }
      it->default_value = text_of(value, pw.at(key));
    }
  }
  for (const auto& p : params) {
    if (p.default_value.empty()) pw.at(p.name).fail("missing (expected a duration, e.g. \"10s\")");
  }
  return params;
}

void parse_masters(const Json& file, algorithms::ScriptedLockDef& d, const Where& w) {
  if (!file.contains("masters")) return;
  const Json& m = file["masters"];
  if (!m.is_number_integer() || m.get<int64_t>() < 1 || m.get<int64_t>() > kMastersMax) {
    w.at("masters").fail("expected a whole number from 1 to " + std::to_string(kMastersMax));
  }
  d.masters = static_cast<size_t>(m.get<int64_t>());
}

void parse_steps(const Json& file, algorithms::ScriptedLockDef& d, const Where& w) {
  for (const char* required : {"acquire", "release"}) {
    if (!file.contains(required)) w.at(required).fail("missing (expected a step)");
  }
  d.acquire = parse_step(file["acquire"], w.at("acquire"), "held by another client", true);
  d.fence_element = parse_fence(file["acquire"], d.acquire, w.at("acquire"));
  d.release = parse_step(file["release"], w.at("release"),
                         "lock no longer held by us (expired or taken over)", false);
  if (file.contains("recheck")) d.recheck = parse_step(file["recheck"], w.at("recheck"), "", false);
  if (file.contains("expire")) d.expire = parse_step(file["expire"], w.at("expire"), "", false);
  if (file.contains("renew")) d.renew = parse_step(file["renew"], w.at("renew"), "", false);
  if (d.masters > 1 && (d.recheck || d.expire || d.fence_element)) {
    w.at("masters").fail("recheck, expire and fence go with one master only, got " +
                         std::to_string(d.masters));
  }
}

}  // namespace

std::shared_ptr<const algorithms::ScriptedLockDef> parse_script_file(const std::string& json_text,
                                                                     const std::string& source,
                                                                     const std::string& name) {
  const Json file = parse_strict_json(json_text, source);
  const Where w{source, ""};
  if (!file.is_object()) throw ConfigError(source + ": expected a JSON object");
  only_keys(file, Where{source, "(top level)"},
            {"summary", "masters", "params", "acquire", "recheck", "expire", "release", "renew"});
  auto d = std::make_shared<algorithms::ScriptedLockDef>();
  d->name = name;
  d->summary = file.contains("summary") ? text_of(file["summary"], w.at("summary"))
                                        : "a Redis lock defined by " + source;
  // `locksim list` prints it as one line of a table: a newline broke the
  // table, and a NUL or an escape sequence went to the terminal as it was.
  if (std::any_of(d->summary.begin(), d->summary.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    w.at("summary").fail("expected one line of text, without control characters");
  }
  parse_masters(file, *d, w);
  parse_steps(file, *d, w);
  d->params = parse_params(file, *d, w);
  // The defaults must build: a bad one is the file's error, named as such.
  const algorithms::AlgorithmSpec spec = algorithms::scripted_lock_spec(d);
  spec.make({}, source + ": params.");
  return d;
}

std::optional<std::string> script_path_of(const std::string& algorithm) {
  constexpr std::string_view kPrefix = "script:";
  if (algorithm.rfind(kPrefix, 0) != 0) return std::nullopt;
  return algorithm.substr(kPrefix.size());
}

std::string script_file_text(const std::string& path) {
  if (std::optional<std::string> text = read_json_file(path, path, kFileBytesMax)) {
    return std::move(*text);
  }
  for (const BuiltinScript& b : builtin_script_texts()) {
    if (path == b.path) return b.json;
  }
  throw ConfigError(path + ": cannot read the script file");
}

std::shared_ptr<const algorithms::ScriptedLockDef> load_script_file(const std::string& path,
                                                                    const std::string& name) {
  return parse_script_file(script_file_text(path), path, name);
}

void install_script_loader() {
  // Once: sweep workers parse settings too.
  static std::once_flag installed;
  std::call_once(installed, [] {
    algorithms::set_script_loader([](const std::string& name) {
      const std::string path = script_path_of(name).value();  // the registry asks for these only
      if (path.empty()) throw ConfigError(name + ": expected script:FILE.json");
      algorithms::register_algorithm(algorithms::scripted_lock_spec(load_script_file(path, name)));
    });
  });
}

}  // namespace locksim::harness
