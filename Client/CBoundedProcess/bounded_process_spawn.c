#define _GNU_SOURCE
#include "CBoundedProcess.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// Closes every descriptor from `first` on: close_range(2) (Linux 5.9), else one by one up to the
// descriptor limit (at most 65,536 of them). Only async-signal-safe calls: this runs after fork.
static void close_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) == 0) return;
#endif
    struct rlimit limit;
    long last = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && (long)limit.rlim_cur < last) {
        last = (long)limit.rlim_cur;
    }
    for (long descriptor = first; descriptor < last; descriptor++) close((int)descriptor);
}

pid_t bounded_process_spawn(const char *path, char *const argv[], char *const envp[], int input, int error, int *output) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -errno;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) {
        int failure = errno;
        close(ends[0]);
        close(ends[1]);
        return -failure;
    }
    pid_t parent = getpid();
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pid_t pid = fork();
    if (pid == 0) {
        // The child: only async-signal-safe calls until execve.
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
        setpgid(0, 0);
        // Standard streams first (each dup2 clears close-on-exec on its copy); the sources are
        // moved above 2 beforehand, so that one of them being 0, 1 or 2 is not overwritten.
        int in = fcntl(input >= 0 ? input : null, F_DUPFD_CLOEXEC, 3);
        int out = fcntl(ends[1], F_DUPFD_CLOEXEC, 3);
        int err = fcntl(error >= 0 ? error : null, F_DUPFD_CLOEXEC, 3);
        if (in < 0 || out < 0 || err < 0) _exit(127);
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
        close_from(3);
        struct sigaction standard = {0};
        standard.sa_handler = SIG_DFL;
        for (int number = 1; number < NSIG; number++) sigaction(number, &standard, NULL);
        sigset_t none;
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &none, NULL);
        execve(path, argv, envp);
        _exit(127);
    }
    int failure = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(null);
    close(ends[1]);
    if (pid < 0) {
        close(ends[0]);
        return -failure;
    }
    // Also here, so that a kill of the group right after this returns reaches the child.
    setpgid(pid, pid);
    *output = ends[0];
    return pid;
}
