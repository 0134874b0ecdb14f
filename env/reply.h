// A Redis reply, shaped like RESP2, plus one kind RESP does not have: the
// transport failed and the outcome of the command is unknown.
//
// Why the extra kind: a lock client must tell "the server said no" (a nil
// reply to SET NX) from "we do not know whether the server did it" (a
// timeout). The first is a clean failure; the second is Jepsen's :info.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace locksim {

struct Reply {
  enum class Kind {
    kStatus,   // +OK
    kError,    // -ERR ...   (text holds the whole message, code included)
    kInteger,  // :1
    kBulk,     // $3 foo
    kNil,      // $-1 (and *-1)
    kArray,    // *2 ...
    kIoError,  // no reply: timeout, connection refused or reset, partition
  };

  Kind kind = Kind::kNil;
  std::string text;  // status, error, bulk or io-error message
  int64_t integer = 0;
  std::vector<Reply> elements;

  static Reply status(std::string s) { return Reply{Kind::kStatus, std::move(s), 0, {}}; }
  static Reply ok() { return status("OK"); }
  static Reply error(std::string s) { return Reply{Kind::kError, std::move(s), 0, {}}; }
  static Reply integer_reply(int64_t v) { return Reply{Kind::kInteger, {}, v, {}}; }
  static Reply bulk(std::string s) { return Reply{Kind::kBulk, std::move(s), 0, {}}; }
  static Reply nil() { return Reply{}; }
  static Reply array(std::vector<Reply> e) { return Reply{Kind::kArray, {}, 0, std::move(e)}; }
  static Reply io_error(std::string s) { return Reply{Kind::kIoError, std::move(s), 0, {}}; }

  bool is_ok() const { return kind == Kind::kStatus && text == "OK"; }
  bool is_nil() const { return kind == Kind::kNil; }
  bool is_error() const { return kind == Kind::kError; }
  bool is_io_error() const { return kind == Kind::kIoError; }
  bool is_integer(int64_t v) const { return kind == Kind::kInteger && integer == v; }

  bool operator==(const Reply&) const = default;

  // redis-cli-like one-line rendering, for logs, test failures and reports.
  std::string to_string() const;
};

}  // namespace locksim
