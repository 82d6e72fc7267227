/* Hangs in uninterruptible sleep (state D), as a rank stuck on a dead file system or device
 * looks: the parent of a vfork waits in the kernel (TASK_KILLABLE, shown as D) until its child
 * execs or exits, and this child does neither. A fatal signal still ends the parent, and the
 * child with it. */
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(void) {
  if (vfork() == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (;;) pause();
  }
  return 0;
}
