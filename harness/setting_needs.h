// Settings that matter only beside another: which setting decides whether a
// run reads each one, and the check that refuses a given one it does not.
//
// Why: a setting whose parent is off is read by nothing. --rdb-interval
// without --persistence rdb schedules no snapshot, --down-after without a
// failover promotes nobody, --items without the inventory workload stocks
// nothing; each ran as a run without it and said nothing. The pairs:
//   resource.items           resource.workload inventory
//   redis.replication_lag    redis.replicas 1 or more, or a failover profile
//   redis.rdb_interval       redis.persistence rdb
//   redis.down_after         redis.failover, or a failover profile
//   redis.discovery_delay    redis.failover, or a failover profile
//   mysql.replication_lag    mysql.replicas 1 or more, or a failover profile
//   mysql.semi_sync_timeout  mysql.semi_sync
//   mysql.down_after         mysql.failover, or a failover profile
//   mysql.discovery_delay    mysql.failover, or a failover profile
// A failover profile counts because its deployment adds the replica and the
// failover (harness/profile_deployment.h). Only a given setting is refused
// (RunConfig::given_paths says why given, not "off its default"): one left
// out, or moved by --time-scale, asked for nothing. In a scenario file a key
// at its default is no request either: result.json's "params", which lists
// every setting, reads back as a scenario (docs/reference/scenarios.md).
#pragma once

#include "harness/run_config.h"
#include "harness/settings.h"

namespace locksim::harness {

// Whether the run of `config` reads `setting`: false only for a setting of
// the pairs above whose parent is off. Another backend's setting is not
// judged here (validate() refuses it by its section); it reads as true.
bool run_reads(const RunConfig& config, const Setting& setting);

// Throws ConfigError for the first given setting (table order) the run does
// not read (in a scenario file: not at its default), naming it and its
// parent, on one line: "--rdb-interval: only read
// with --persistence rdb (it is none); give that too, or leave --rdb-interval
// out". Another backend's settings are left to validate()'s own check.
void validate_given_are_read(const RunConfig& config);

}  // namespace locksim::harness
