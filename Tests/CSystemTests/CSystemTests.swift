#if os(Linux)
    import CSystem
    import Glibc
    import Testing

    /// The shim exposes working epoll, eventfd and timerfd calls.
    @Suite struct CSystemTests {
        @Test func eventfdWakesEpoll() throws {
            let epoll = swiftlet_epoll_create1(Int32(EPOLL_CLOEXEC))
            #expect(epoll >= 0)
            defer { close(epoll) }
            let wake = swiftlet_eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
            #expect(wake >= 0)
            defer { close(wake) }

            var registration = epoll_event()
            registration.events = EPOLLIN.rawValue
            registration.data.fd = wake
            #expect(swiftlet_epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &registration) == 0)

            var ready = [epoll_event](repeating: epoll_event(), count: 4)
            #expect(swiftlet_epoll_wait(epoll, &ready, 4, 0) == 0, "nothing is ready before the write")

            var one: UInt64 = 1
            #expect(write(wake, &one, 8) == 8)
            #expect(swiftlet_epoll_wait(epoll, &ready, 4, 1000) == 1)
            #expect(ready[0].data.fd == wake)
        }

        @Test func timerfdFiresThroughEpoll() throws {
            let epoll = swiftlet_epoll_create1(Int32(EPOLL_CLOEXEC))
            defer { close(epoll) }
            let timer = swiftlet_timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
            #expect(timer >= 0)
            defer { close(timer) }
            var registration = epoll_event()
            registration.events = EPOLLIN.rawValue
            registration.data.fd = timer
            #expect(swiftlet_epoll_ctl(epoll, EPOLL_CTL_ADD, timer, &registration) == 0)

            var due = itimerspec()
            due.it_value.tv_nsec = 1_000_000  // 1 ms
            #expect(swiftlet_timerfd_settime(timer, 0, &due, nil) == 0)
            var ready = [epoll_event](repeating: epoll_event(), count: 1)
            #expect(swiftlet_epoll_wait(epoll, &ready, 1, 5000) == 1)
            var expirations: UInt64 = 0
            #expect(read(timer, &expirations, 8) == 8)
            #expect(expirations >= 1)
        }
    }
#endif
