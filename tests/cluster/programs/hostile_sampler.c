/* LD_PRELOAD'ed into a step's tasks, acting only in the --ddp-monitor sampler (which runs the
 * job's environment): HOSTILE_SAMPLER=flood writes 64 KiB blocks to its channel to slurmstepd
 * (fd 4) until a write fails; =hang never reads fd 3 and never exits; =passfd tries to hand
 * slurmstepd, through fds 3 and 4, a TCP socket whose close would block for 30 s (SO_LINGER with
 * unsent data), and says on stderr if a descriptor went through; =swap reopens its own channel
 * to slurmstepd for reading (/proc/self/fd/4), takes out whatever is there, and writes a line
 * naming HOSTILE_VICTIM (a PID of the user's) as the helper, so that root would kill that
 * process instead. The rest of the job is untouched. */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int in_sampler(void) {
  char comm[32] = {0};
  int fd = open("/proc/self/comm", O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, comm, sizeof comm - 1);
  close(fd);
  return n > 0 && strncmp(comm, "ddp-monitor\n", 12) == 0;
}

/* A connected loopback TCP socket with unsent data and a 30 s linger: closing it blocks. */
static int lingering_socket(void) {
  int listener = socket(AF_INET, SOCK_STREAM, 0), s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (listener < 0 || s < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(listener, 1) != 0 || getsockname(listener, (struct sockaddr *)&a, &len) != 0 ||
      connect(s, (struct sockaddr *)&a, sizeof a) != 0)
    return -1;
  static char block[64 * 1024];
  fcntl(s, F_SETFL, O_NONBLOCK);
  while (write(s, block, sizeof block) > 0) {
  }
  struct linger l = {1, 30};
  setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  return s;
}

static void pass_fd(int channel, int fd) {
  char byte = 'x';
  struct iovec iov = {&byte, 1};
  union { struct cmsghdr h; char space[CMSG_SPACE(sizeof(int))]; } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space,
                       .msg_controllen = sizeof control.space};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  if (sendmsg(channel, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
    fprintf(stderr, "hostile: a descriptor went through fd %d\n", channel);
}

__attribute__((constructor)) static void hostile(void) {
  const char *mode = getenv("HOSTILE_SAMPLER");
  if (!mode || !in_sampler()) return;
  if (strcmp(mode, "flood") == 0) {
    static char block[64 * 1024];
    memset(block, 'x', sizeof block);
    while (write(4, block, sizeof block) > 0) {
    }
  }
  if (strcmp(mode, "swap") == 0 && getenv("HOSTILE_VICTIM")) {
    const char *victim = getenv("HOSTILE_VICTIM");
    char path[64], stat[1024], line[128];
    snprintf(path, sizeof path, "/proc/self/fd/4");
    const int reader = open(path, O_RDONLY | O_NONBLOCK);
    while (reader >= 0 && read(reader, stat, sizeof stat) > 0) {
    }
    snprintf(path, sizeof path, "/proc/%s/stat", victim);
    const int fd = open(path, O_RDONLY);
    const ssize_t n = fd >= 0 ? read(fd, stat, sizeof stat - 1) : -1;
    if (n > 0) {
      stat[n] = 0;
      const char *p = strrchr(stat, ')');
      for (int field = 2; p && *p && field < 22; ++p)
        if (*p == ' ') ++field;
      snprintf(line, sizeof line, "helper %s %llu\n", victim, p ? strtoull(p, NULL, 10) : 0ULL);
      (void)!write(4, line, strlen(line));
    }
  }
  if (strcmp(mode, "passfd") == 0) {
    const int s = lingering_socket();
    if (s >= 0) {
      pass_fd(3, s);
      pass_fd(4, s);
    }
  }
  for (;;) pause();
}
