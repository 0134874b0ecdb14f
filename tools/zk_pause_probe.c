/* zk_pause_probe: one trial of scripts/zk-pause-curve against a real
 * ZooKeeper, with the C client (libzookeeper_mt).
 *
 *   zk_pause_probe HOSTS SESSION_TIMEOUT_MS
 *
 * Connects, creates an ephemeral node and prints "ready SESSION TIMEOUT_MS"
 * (the negotiated timeout). The caller then SIGSTOPs and SIGCONTs this
 * process and writes a line to its stdin. The probe asks the server about its
 * node on its own session until the server answers or says the session
 * expired, then looks for the node from a second, fresh session, and prints
 * "result expired|alive node=present|gone". Exit 0; 1 on an error; 2 on bad
 * usage. Build: cc -DTHREADED tools/zk_pause_probe.c -lzookeeper_mt */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h> /* with -DTHREADED: the synchronous calls */

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh; (void)type; (void)state; (void)path; (void)ctx;
}

/* A handle whose session is established, or NULL after ~10 s. */
static zhandle_t *connect_session(const char *hosts, int timeout_ms) {
  zhandle_t *zh = zookeeper_init(hosts, watcher, timeout_ms, NULL, NULL, 0);
  for (int i = 0; zh && i < 1000; ++i) {
    if (zoo_state(zh) == ZOO_CONNECTED_STATE) return zh;
    nap_ms(10);
  }
  if (zh) zookeeper_close(zh);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3 || atoi(argv[2]) <= 0) {
    fprintf(stderr, "usage: zk_pause_probe HOSTS SESSION_TIMEOUT_MS\n");
    return 2;
  }
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  const int asked = atoi(argv[2]);
  zhandle_t *zh = connect_session(argv[1], asked);
  if (!zh) { fprintf(stderr, "zk_pause_probe: no session\n"); return 1; }
  char path[64];
  snprintf(path, sizeof path, "/probe-%d-%ld", (int)getpid(), (long)time(NULL));
  int rc = zoo_create(zh, path, "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
  if (rc != ZOK) { fprintf(stderr, "zk_pause_probe: create: %s\n", zerror(rc)); return 1; }
  printf("ready %llx %d\n", (unsigned long long)zoo_client_id(zh)->client_id, zoo_recv_timeout(zh));
  fflush(stdout);

  char line[16];
  if (!fgets(line, sizeof line, stdin)) return 1; /* the caller paused us and let us go */

  /* Our own session: the server answers (alive) or says expired. */
  const char *verdict = NULL;
  for (int i = 0; !verdict && i < 200; ++i) {
    struct Stat st;
    rc = zoo_exists(zh, path, 0, &st);
    if (rc == ZOK) verdict = "alive";
    else if (rc == ZSESSIONEXPIRED || zoo_state(zh) == ZOO_EXPIRED_SESSION_STATE)
      verdict = "expired";
    else nap_ms(50); /* ZCONNECTIONLOSS: the client is reconnecting */
  }
  if (!verdict) { fprintf(stderr, "zk_pause_probe: no answer on the session\n"); return 1; }
  /* A second session, while the first is still open: is the node there? */
  zhandle_t *other = connect_session(argv[1], asked);
  if (!other) { fprintf(stderr, "zk_pause_probe: no second session\n"); return 1; }
  struct Stat st;
  rc = zoo_exists(other, path, 0, &st);
  if (rc != ZOK && rc != ZNONODE) {
    fprintf(stderr, "zk_pause_probe: exists: %s\n", zerror(rc));
    return 1;
  }
  printf("result %s node=%s\n", verdict, rc == ZOK ? "present" : "gone");
  fflush(stdout);
  zookeeper_close(other);
  zookeeper_close(zh); /* deletes the node if the session lived */
  return 0;
}
