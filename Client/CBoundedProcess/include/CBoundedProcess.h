#ifndef C_BOUNDED_PROCESS_H
#define C_BOUNDED_PROCESS_H

#include <sys/types.h>

/// Starts the program at `path` (an absolute path, not searched) with `argv` and `envp`, for
/// `BoundedProcess`. Its standard input is `input` (-1: /dev/null), its standard output the write
/// end of a new pipe whose read end (close-on-exec) is stored in `*output`, its standard error
/// `error` (-1: /dev/null).
///
/// The child, before it runs the program: asks the kernel for SIGKILL when the thread that
/// started it ends (PR_SET_PDEATHSIG; it ends at once when that already happened), which covers
/// the parent being killed with SIGKILL; leads a process group of its own, so that it and what it
/// starts can be killed together; has every signal at its default and none blocked; and keeps no
/// other descriptor. No handler of the parent runs in it (every signal is blocked around fork).
///
/// Returns the child's process ID, or -errno when it could not be started.
pid_t bounded_process_spawn(const char *path, char *const argv[], char *const envp[], int input, int error, int *output);

#endif
