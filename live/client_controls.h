// How the live nemesis reaches one client: its faults (pause, hang, crash,
// clock) as the LiveTargets controls the nemesis calls, wired the same way
// for every backend whose clients are threads of this process.
#pragma once

#include <cstdint>

#include "env/time.h"
#include "live/client_clock.h"
#include "live/client_freeze.h"
#include "live/client_life.h"
#include "live/live_nemesis.h"

namespace locksim::live {

// Points `t`'s client controls at the client's freeze (GC pause), hang
// (its work only), life (crash, restart) and clock. Each must outlive the
// nemesis that calls `t`.
inline void wire_client_controls(LiveTargets::Server& t, ClientFreeze& freeze, ClientFreeze& hang,
                                 ClientLife& life, ClientClock& clock) {
  ClientFreeze* f = &freeze;
  ClientFreeze* h = &hang;
  ClientLife* l = &life;
  ClientClock* k = &clock;
  t.crash = [l] { l->crash(); };
  t.restart = [l] { l->restart(); };
  t.pause = [f] { f->pause(); };
  t.resume = [f] { f->resume(); };
  t.hang = [h] { h->pause(); };
  t.unhang = [h] { h->resume(); };
  t.abandon = [f, h] {
    f->abandon();
    h->abandon();
  };
  t.jump = [k](Duration by) { k->jump(by); };
  t.set_drift = [k](int64_t ppm) { k->set_drift(ppm); };
}

}  // namespace locksim::live
