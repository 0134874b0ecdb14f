#include "checkers/knossos.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "checkers/wall_clock.h"
#include "env/assert.h"
#include "env/parse.h"

extern char** environ;

namespace locksim::checkers {

namespace {

constexpr size_t kStderrKeepBytes = 4096;  // enough for the last few lines, bounded

// Everything the child needs, built before fork (no allocation after it).
struct ChildSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;
};

ChildSpec child_spec(const std::vector<std::string>& files, const KnossosOptions& o) {
  ChildSpec s;
  // `exec COMMAND "$@"`: the command is shell words, the files stay verbatim.
  s.argv = {"/bin/sh",         "-c",          "exec " + o.command + " \"$@\"",
            "locksim-knossos", "--algorithm", "wgl"};
  s.argv.insert(s.argv.end(), files.begin(), files.end());
  std::string tool_options;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (kv.starts_with("KNOSSOS_HEAP=") || kv.starts_with("KNOSSOS_TIMEOUT=")) continue;
    if (kv.starts_with("JAVA_TOOL_OPTIONS=")) {
      tool_options = std::string(kv.substr(18)) + " ";
      continue;
    }
    s.env.emplace_back(kv);
  }
  const int64_t limit_s = (o.time_limit.ns + 999'999'999) / 1'000'000'000;
  s.env.push_back("KNOSSOS_HEAP=" + o.heap);
  // knossos.sh's own limit, a little later than ours: we kill first, and say why.
  s.env.push_back(fmt::format("KNOSSOS_TIMEOUT={}", limit_s + 30));
  // An out-of-memory JVM exits at once instead of thrashing in GC to the limit.
  s.env.push_back("JAVA_TOOL_OPTIONS=" + tool_options + "-Xmx" + o.heap +
                  " -XX:+ExitOnOutOfMemoryError");
  return s;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct Pipes {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
};

[[noreturn]] void exec_child(const Pipes& p, std::vector<char*>& argv, std::vector<char*>& env) {
  // Its own process group, so the limit can kill the JVM and everything
  // between it and us at once.
  setpgid(0, 0);
  const int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  dup2(p.out[1], STDOUT_FILENO);
  dup2(p.err[1], STDERR_FILENO);
  for (int fd : {p.out[0], p.out[1], p.err[0], p.err[1]}) close(fd);
  execve(argv[0], argv.data(), env.data());
  _exit(127);
}

// Reads both pipes until they close or the deadline passes. Returns false on timeout.
bool drain(const Pipes& p, const checkers::WallDeadline& deadline, std::string* out,
           std::string* err) {
  pollfd fds[2] = {{p.out[0], POLLIN, 0}, {p.err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const int64_t left_ms = deadline.remaining_ms();
    if (left_ms <= 0) return false;
    const int n = poll(fds, 2, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (n < 0 && errno != EINTR) return true;  // cannot wait on it: treat as finished
    for (int i = 0; i < 2 && n > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        std::string& to = i == 0 ? *out : *err;
        to.append(buf, static_cast<size_t>(got));
        if (i == 1 && to.size() > 4 * kStderrKeepBytes) to.erase(0, to.size() - kStderrKeepBytes);
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  return true;
}

std::string last_line(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) {
    s.remove_suffix(1);
  }
  const size_t nl = s.rfind('\n');
  std::string line(nl == std::string_view::npos ? s : s.substr(nl + 1));
  if (line.size() > 200) line = line.substr(0, 197) + "...";
  return line;
}

// Why a call that did not answer for some files ended, in words.
std::string why_dead(bool timed_out, int status, const KnossosOptions& o, const std::string& err) {
  if (timed_out) return "timed out after " + format_duration(o.time_limit);
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  const int code = WEXITSTATUS(status);
  // The JVM's own error names the class with its package; the bare word is
  // also in the "Picked up JAVA_TOOL_OPTIONS: ... -XX:+ExitOnOutOfMemoryError"
  // line every JVM prints under the options locksim sets, so it proves nothing.
  if (code == 3 || err.find("java.lang.OutOfMemoryError") != std::string::npos) {
    return "out of memory (heap " + o.heap + ")";
  }
  if (code == 124) return "timed out (the command's own limit)";
  if (code == 127) return "command not found: " + o.command;
  const std::string line = last_line(err);
  return fmt::format("crashed (exit {}){}", code, line.empty() ? "" : ": " + line);
}

// The :index of the op in Knossos's `:op {...}` entry, or -1.
int64_t failed_op_index(std::string_view block) {
  const size_t op = block.find(":op");
  if (op == std::string_view::npos) return -1;
  const size_t close = block.find('}', op);
  const size_t idx = block.find(":index ", op);
  if (idx == std::string_view::npos || (close != std::string_view::npos && idx > close)) return -1;
  int64_t v = -1;
  const char* start = block.data() + idx + 7;
  std::from_chars(start, block.data() + block.size(), v);
  return v;
}

// The first position >= from where a line starts with `prefix`, or npos.
size_t find_line_start(std::string_view text, const std::string& prefix, size_t from) {
  for (size_t at = text.find(prefix, from); at != std::string_view::npos;
       at = text.find(prefix, at + 1)) {
    if (at == 0 || text[at - 1] == '\n') return at;
  }
  return std::string_view::npos;
}

}  // namespace

std::vector<KnossosVerdict> parse_knossos_output(const std::string& out,
                                                 const std::vector<std::string>& files,
                                                 const std::string& why_dead) {
  std::vector<KnossosVerdict> verdicts(files.size());
  const std::string_view text(out);
  size_t from = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    KnossosVerdict& v = verdicts[i];
    v.why = why_dead.empty() ? "no answer for this file in Knossos's output" : why_dead;
    // Each file's answer starts with a line "FILE<TAB>{analysis...", which
    // may span lines, and ends with a line that is exactly its verdict (the
    // analysis map's own lines are indented or follow a key).
    const size_t at = find_line_start(text, files[i] + "\t", from);
    if (at == std::string_view::npos) continue;
    for (size_t line_start = at; line_start < text.size();) {
      const size_t nl = text.find('\n', line_start);
      const size_t line_end = nl == std::string_view::npos ? text.size() : nl;
      const std::string_view line = text.substr(line_start, line_end - line_start);
      const size_t next_line = nl == std::string_view::npos ? text.size() : nl + 1;
      if (line_start > at && i + 1 < files.size() && line.starts_with(files[i + 1])) break;
      LOCKSIM_ASSERT(line_start >= at && next_line > line_start);
      if (line == "true" || line == "false" || line == ":unknown") {
        v.kind = line == "true"    ? Verdict::Kind::kValid
                 : line == "false" ? Verdict::Kind::kInvalid
                                   : Verdict::Kind::kUnknown;
        v.why = line == ":unknown" ? "Knossos answered :unknown" : "";
        if (line == "false") v.op_index = failed_op_index(text.substr(at, line_start - at));
        // Pair: a verdict read is one of the three Knossos can print, and an
        // unknown one says why, so no caller shows an empty reason.
        LOCKSIM_ASSERT(v.kind != Verdict::Kind::kUnknown || !v.why.empty());
        from = next_line;
        break;
      }
      line_start = next_line;
    }
  }
  LOCKSIM_ASSERT(verdicts.size() == files.size());
  return verdicts;
}

KnossosRun run_knossos(const std::vector<std::string>& files, const KnossosOptions& options) {
  LOCKSIM_ASSERT_MSG(!options.command.empty(), "the caller chose a Knossos command");
  LOCKSIM_ASSERT_MSG(options.time_limit.ns > 0, "a Knossos call is always bounded in time");
  KnossosRun run;
  ChildSpec spec = child_spec(files, options);
  LOCKSIM_ASSERT(spec.argv.size() == files.size() + 6);
  std::vector<char*> argv = c_strings(spec.argv);
  std::vector<char*> env = c_strings(spec.env);
  Pipes p;
  if (pipe2(p.out, O_CLOEXEC) != 0 || pipe2(p.err, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("knossos: pipe: ") + std::strerror(errno));
  }
  // The limit counts from the fork: the JVM's start-up is part of its cost.
  const checkers::WallDeadline deadline(options.time_limit.ns);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("knossos: fork: ") + std::strerror(errno));
  if (pid == 0) exec_child(p, argv, env);
  setpgid(pid, pid);  // also here: no race with the child's own setpgid
  close(p.out[1]);
  close(p.err[1]);

  std::string out;
  std::string err;
  const bool finished = drain(p, deadline, &out, &err);
  if (!finished) kill(-pid, SIGKILL);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  // Whatever it left behind in its group goes too (a JVM whose shell died).
  kill(-pid, SIGKILL);
  close(p.out[0]);
  close(p.err[0]);
  run.seconds = deadline.elapsed_seconds();
  run.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.stderr_tail = err.size() > kStderrKeepBytes ? err.substr(err.size() - kStderrKeepBytes) : err;
  const bool answered = finished && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  run.verdicts =
      parse_knossos_output(out, files, answered ? "" : why_dead(!finished, status, options, err));
  LOCKSIM_ASSERT(run.verdicts.size() == files.size());
  return run;
}

std::string knossos_edn(const std::vector<history::Op>& ops) {
  std::string out;
  for (const history::Op& op : ops) {
    if (!history::is_client_op(op)) continue;
    // Knossos's mutex model knows only these two; nemesis ops were skipped.
    LOCKSIM_ASSERT(op.f == history::OpF::kAcquire || op.f == history::OpF::kRelease);
    LOCKSIM_ASSERT(op.process >= 0);
    out += fmt::format("{{:index {}, :time {}, :process {}, :type :{}, :f :{}, :value nil}}\n",
                       op.index, op.time_ns, op.process, to_string(op.type), to_string(op.f));
  }
  return out;
}

std::string format_bytes(int64_t bytes) {
  if (bytes >= 1'000'000'000) return fmt::format("{:.1f} GB", static_cast<double>(bytes) / 1e9);
  if (bytes >= 1'000'000) return fmt::format("{} MB", bytes / 1'000'000);
  if (bytes >= 1'000) return fmt::format("{} kB", bytes / 1'000);
  return fmt::format("{} B", bytes);
}

}  // namespace locksim::checkers
