#ifndef SWIFTLET_CSYSTEM_H
#define SWIFTLET_CSYSTEM_H
// Linux readiness and timer primitives, glibc's heap trim, and process
// spawning with glibc's file actions, that Glibc does not export to Swift.
#ifdef __linux__
#include <malloc.h>
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

/// The corresponding C function is `epoll_create1`.
int swiftlet_epoll_create1(int flags);
/// The corresponding C function is `epoll_ctl`.
int swiftlet_epoll_ctl(int epfd, int op, int fd, struct epoll_event *event);
/// The corresponding C function is `epoll_wait`.
int swiftlet_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);
/// The corresponding C function is `eventfd`.
int swiftlet_eventfd(unsigned int initval, int flags);
/// The corresponding C function is `timerfd_create`.
int swiftlet_timerfd_create(int clockid, int flags);
/// The corresponding C function is `timerfd_settime`.
int swiftlet_timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                             struct itimerspec *old_value);
/// Starts the program at `path` with `argv` (NULL-terminated) and this
/// process's environment: its standard input is `input`, its standard
/// output and error `output`, its working directory `directory` (this
/// process's when NULL); it inherits no other descriptor, no blocked
/// signal and no ignored one. Returns its pid, or -1 with errno set.
/// The corresponding C function is `posix_spawn`.
pid_t swiftlet_spawn(const char *path, char *const argv[], int input, int output, const char *directory);
/// Returns free heap memory to the system, from every arena; 1 if any was.
/// The corresponding C function is `malloc_trim`.
int swiftlet_malloc_trim(size_t pad);
#endif
#endif
