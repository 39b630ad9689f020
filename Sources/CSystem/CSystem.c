#include "CSystem.h"
#ifdef __linux__
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
