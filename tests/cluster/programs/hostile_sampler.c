/* LD_PRELOAD'ed into a step's tasks, acting only in the --ddp-monitor sampler (which runs the
 * job's environment): HOSTILE_SAMPLER=flood writes 64 KiB blocks to the control channel (fd 3)
 * until a write fails; =hang never reads it and never exits. The rest of the job is untouched. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

static int in_sampler(void) {
  char comm[32] = {0};
  int fd = open("/proc/self/comm", O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, comm, sizeof comm - 1);
  close(fd);
  return n > 0 && strncmp(comm, "ddp-monitor\n", 12) == 0;
}

__attribute__((constructor)) static void hostile(void) {
  const char *mode = getenv("HOSTILE_SAMPLER");
  if (!mode || !in_sampler()) return;
  if (strcmp(mode, "flood") == 0) {
    static char block[64 * 1024];
    memset(block, 'x', sizeof block);
    while (write(3, block, sizeof block) > 0) {
    }
  }
  for (;;) pause();
}
