// The questions `explain` (checkers/explain.h) asks of a history's nemesis
// and client ops: was this node paused, cut off, or its clock moved at that
// instant; whose release was in flight; whose token is this. Each answers
// from ops alone, so a history from a file answers the same way.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkers/lock_trace.h"
#include "env/time.h"
#include "history/history.h"

namespace locksim::checkers::records {

// The node names a nemesis op's first value (its targets) and, for a
// partition or a delay, its second (the other side) name: "c1,c3" -> c1, c3;
// "c1->redis-1" -> c1, redis-1.
std::vector<std::string> nodes_named(const history::Op& op);
bool names(const history::Op& op, const std::string& node);

// Whether `text` (a story step) names `server` as a whole name: "redis-1"
// is not named by "redis-1-r1".
bool names_server(const std::string& text, const std::string& server);

// The pause of `node` under way at `at` (paused at or before it, not resumed
// before it), or nullptr.
const history::Op* pause_at(const history::History& h, const std::string& node, TimePoint at);
// A partition that cuts `node` off, under way at `at`, or nullptr.
const history::Op* partition_at(const history::History& h, const std::string& node, TimePoint at);
// A partition or a delay on `node`'s links, under way at `at`, or nullptr: a
// delay (its messages held up) cuts it off as surely as a partition once it
// outlasts a session's timeout, and the session's expiry says it did.
const history::Op* link_fault_at(const history::History& h, const std::string& node, TimePoint at);
// A partition or a delay under way at `at` whose both sides name only
// `servers`: the servers cut apart from each other, or nullptr.
const history::Op* servers_split_at(const history::History& h,
                                    const std::vector<std::string>& servers, TimePoint at);
// The last clock fault (jump, drift) of `node` at or before `at`, or nullptr.
const history::Op* clock_fault_before(const history::History& h, const std::string& node,
                                      TimePoint at);
// A release invoked at or before `at` whose outcome its client did not know
// before `at` (still open, or ended :info: sent, fate unknown), by a client
// other than `not_client` (-1: any), or nullptr. The latest such.
const history::Op* release_in_flight(const history::History& h, TimePoint at, int not_client);

// The acquire :ok op that handed out `token`, or nullptr.
const history::Op* acquire_with_token(const history::History& h, const std::string& token);
// The client a stored token belongs to: the one whose acquire :ok carried it,
// else the "cN:" prefix locksim's tokens start with, else the token is a
// client's name ("c3": a lock keyed by its client, as reentrant-hash's hash
// field); nullopt if none.
std::optional<int> client_of_token(const history::History& h, const std::string& token);
// Whether a server that stores `stored` keeps the lock of the grant that
// carried `token`: the same token, or `stored` is the name of the token's
// client ("c3" for "c3:9a0f..."), as a lock keyed by client name stores it
// (a re-entrant hash whose field is the client: every lease of that client
// is the same lock to the server).
bool holds(const std::string& stored, const std::string& token);
// The invocation of the acquire that `ok` completes.
const history::Op* invocation_of(const history::History& h, const history::Op& ok);
// The op that completes `invoke` (its process's next op of the same f), or
// nullptr while it is still open at the end.
const history::Op* completion_of(const history::History& h, const history::Op& invoke);
// The first crash of `node` in [from, to], or nullptr.
const history::Op* crash_between(const history::History& h, const std::string& node, TimePoint from,
                                 TimePoint to);
// The writer's acquires that may have set a token first stored at
// `written`: each acquire draws its own token, but an :info carries none,
// so every acquire invoked by then that ended not knowing its outcome (or
// never ended) may be the one. Each with its end, or nullptr.
std::vector<std::pair<const history::Op*, const history::Op*>> acquires_unknown(
    const history::History& h, int writer, TimePoint written);
// The acquires still open at the end of the run (invoked, never completed),
// in history order.
std::vector<const history::Op*> open_acquires(const history::History& h);
// The first time a server (`server`, or any when empty) stored the lock for
// `token`: on any server, the grant itself (a replica's copy comes later,
// by replication). nullptr when none did.
const LockChange* first_stored(const LockTrace& trace, const std::string& token,
                               const std::string& server = "");
// `c` paused, cut off (a partition, a delay), or behind a delay's held
// messages at `at` (a link keeps its order, so a delay of D by X that began
// at T holds it until T + D + X, past its own end): the fault, or nullptr.
const history::Op* cut_off_at(const history::History& h, const std::string& c, TimePoint at);
// The share of [from, to], in percent, during which `c` was cut off
// (cut_off_at), read at 20 instants spread over it: a fault that began in
// the last second of a long stuck window is not why the lock was stuck.
int cut_off_percent(const history::History& h, const std::string& c, TimePoint from, TimePoint to);
// Past this share of the time a contender waited, being paused or cut off
// is why it could not take the lock (cut_off_percent reads 5 % steps).
inline constexpr int kMostlyCutOffPercent = 50;
// " since 3.000s (pause c1 for 20s)" of the fault that stalls a client (a
// delay adds "; what it holds arrives until T").
std::string since_fault(const history::Op& fault);
// The last change by `until` that took `server` down (a crash or a pause: a
// paused server shows as down too), or nullptr.
const LockChange* went_down(const LockTrace& trace, const std::string& server, TimePoint until);
// "SERVER keeps the lock for nobody until its lease runs out at T, D after
// the end": the last step of a grant its client never heard of.
std::string kept_for_nobody(const ServerLock& s, TimePoint expires, TimePoint end);
// The last op in [from, to] that ended a fault of `a` or of `b` (a resume, a
// heal, a restart): what let a request held meanwhile through. nullptr
// when none.
const history::Op* fault_end_between(const history::History& h, const std::string& a,
                                     const std::string& b, TimePoint from, TimePoint to);

// Whether the servers whose answer counts still keep the lock for `token`:
// fewer than a majority of them (one of one; Redlock's three of five) could
// grant it to anyone else — a down server grants nobody.
bool protected_by(const std::vector<ServerLock>& states, const std::string& token);
// Until when the servers' expiries keep the lock for `token` if nothing
// else happens (the expiry that leaves a majority able to grant it), kNever
// when none expires, nullopt when it is not protected now.
std::optional<TimePoint> protected_until(const std::vector<ServerLock>& states,
                                         const std::string& token);
// The first instant in [from, to] at which `token` is not protected, or
// nullopt if it is throughout.
std::optional<TimePoint> lost_at(const LockTrace& trace, const std::string& token, TimePoint from,
                                 TimePoint to);

// "2.000s"
std::string at_text(TimePoint t);

}  // namespace locksim::checkers::records
