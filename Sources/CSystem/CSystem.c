#define _GNU_SOURCE
#include "CSystem.h"
#ifdef __linux__
#include <errno.h>
#include <signal.h>
#include <spawn.h>

extern char **environ;

pid_t swiftlet_spawn(const char *path, char *const argv[], int input, int output, const char *directory) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int failure = posix_spawn_file_actions_init(&actions);
    if (failure != 0) {
        errno = failure;
        return -1;
    }
    failure = posix_spawnattr_init(&attributes);
    if (failure != 0) {
        posix_spawn_file_actions_destroy(&actions);
        errno = failure;
        return -1;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    failure = posix_spawnattr_setsigmask(&attributes, &none);
    if (!failure) failure = posix_spawnattr_setsigdefault(&attributes, &all);
    if (!failure) failure = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (!failure) failure = posix_spawn_file_actions_adddup2(&actions, input, 0);
    if (!failure) failure = posix_spawn_file_actions_adddup2(&actions, output, 1);
    if (!failure) failure = posix_spawn_file_actions_adddup2(&actions, output, 2);
    if (!failure) failure = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (!failure && directory != NULL) failure = posix_spawn_file_actions_addchdir_np(&actions, directory);
    pid_t pid = -1;
    if (!failure) failure = posix_spawn(&pid, path, &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (failure != 0) {
        errno = failure;
        return -1;
    }
    return pid;
}

int swiftlet_epoll_create1(int flags) { return epoll_create1(flags); }
int swiftlet_epoll_ctl(int epfd, int op, int fd, struct epoll_event *event) {
    return epoll_ctl(epfd, op, fd, event);
}
int swiftlet_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout) {
    return epoll_wait(epfd, events, maxevents, timeout);
}
int swiftlet_eventfd(unsigned int initval, int flags) { return eventfd(initval, flags); }
int swiftlet_timerfd_create(int clockid, int flags) { return timerfd_create(clockid, flags); }
int swiftlet_timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                             struct itimerspec *old_value) {
    return timerfd_settime(fd, flags, new_value, old_value);
}
int swiftlet_malloc_trim(size_t pad) {
#ifdef __GLIBC__
    return malloc_trim(pad);
#else
    return 0;
#endif
}
#endif
