//! Background threads that give way to requests at once: Linux's idle scheduling class.
//!
//! A thread at a high nice value (10, 19) that has a core keeps it until its time slice runs out:
//! the scheduler protects a running task's slice (up to 1.5 ms on 2 cores), so a request whose
//! thread wakes meanwhile waits for it, once per hand-off between threads. A thread in the idle
//! class is preempted as soon as any other thread wants its core. What that costs: while the cores
//! are busy all the time, idle-class work hardly runs; it catches up when they are not.
//!
//! The thread's disk requests go in the idle I/O class too: once the cores are full, idle CPU is
//! rare but the disk waits are not, and a request's fsync then queued behind the background
//! thread's checkpoints (Linux's I/O schedulers that know classes, such as mq-deadline and BFQ, serve
//! an idle-class request only when nothing else waits; without one, the class changes nothing).
//!
//! Both classes are inherited: a thread started by a thread in the idle class starts in it, and an
//! unprivileged process cannot take it out again. SQLite's connections each run on a thread of
//! their own, started by whichever thread opens the connection, so a background thread here must
//! never open one of the server's shared connections (see `sqlite`: they are all opened when the
//! store connects, and kept).
//!
//! With `sqlite::memory`, the only modules of the crate with `unsafe` code (the crate denies it
//! elsewhere): the C library's `sched_setscheduler` and the `ioprio_set` system call, which rustix
//! does not wrap.

#![allow(unsafe_code)]

/// A thread of this process by its Linux thread id; `None` names the calling thread.
pub type Thread = Option<i32>;

/// The nice value used where the idle class is refused.
pub const FALLBACK_NICENESS: i32 = 10;

/// Moves `thread` into the idle class or, where that is refused, to [`FALLBACK_NICENESS`]; says
/// whether the idle class took.
pub fn give_way(thread: Thread) -> bool {
    if !set_idle_io_class(thread.unwrap_or(0)) {
        tracing::debug!("a background thread's disk requests keep the server's I/O class");
    }
    if set_idle_class(thread.unwrap_or(0)) {
        return true;
    }
    let pid = thread.and_then(rustix::process::Pid::from_raw);
    if let Err(error) = rustix::process::setpriority_process(pid, FALLBACK_NICENESS) {
        tracing::debug!(%error, "a background thread runs at the server's priority");
    }
    false
}

/// Whether `thread` is in the idle class.
pub fn gives_way(thread: Thread) -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain system call that reads no memory of ours.
    return unsafe { libc::sched_getscheduler(thread.unwrap_or(0)) } == libc::SCHED_IDLE;
    #[cfg(not(target_os = "linux"))]
    false
}

#[cfg(target_os = "linux")]
fn set_idle_class(tid: i32) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` outlives the call, which only reads it.
    unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn set_idle_class(_tid: i32) -> bool {
    false
}

/// `ioprio_set`'s "who": one thread (a thread id is a process id to it).
#[cfg(target_os = "linux")]
const IOPRIO_WHO_PROCESS: libc::c_long = 1;
/// The idle I/O class, as `ioprio_set` takes it (class in the top bits, level 0).
#[cfg(target_os = "linux")]
const IOPRIO_IDLE: libc::c_long = 3 << 13;

#[cfg(target_os = "linux")]
fn set_idle_io_class(tid: i32) -> bool {
    // SAFETY: a plain system call on integers.
    unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, libc::c_long::from(tid), IOPRIO_IDLE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn set_idle_io_class(_tid: i32) -> bool {
    false
}

/// Whether `thread`'s disk requests are in the idle I/O class.
pub fn waits_for_disk(thread: Thread) -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain system call on integers.
    return unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, libc::c_long::from(thread.unwrap_or(0))) }
        == IOPRIO_IDLE;
    #[cfg(not(target_os = "linux"))]
    false
}

/// The id of this process's thread named `name`, if there is one (Linux's `/proc`).
pub fn thread_named(name: &str) -> Option<i32> {
    threads_named(name).next()
}

/// The ids of this process's threads named `name`.
pub fn threads_named(name: &str) -> impl Iterator<Item = i32> {
    let tasks = std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten();
    tasks.filter_map(move |task| {
        let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
        let tid: i32 = task.file_name().to_str()?.parse().ok()?;
        (comm.trim_end() == name).then_some(tid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another thread of the process is found by its name and put in the idle class (CPU and
    /// disk), without privileges; the calling thread's classes are left as they were.
    #[test]
    fn threads_are_put_in_the_idle_class_by_name() {
        let (ready, wait) = std::sync::mpsc::channel();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let other = std::thread::Builder::new()
            .name("svc-test-idle".into())
            .spawn(move || {
                ready.send(()).unwrap();
                let _ = stopped.recv();
            })
            .unwrap();
        wait.recv().unwrap();
        // A new thread starts in its creator's class (a test run could itself be in the idle one).
        let caller_gives_way = gives_way(None);
        let tid = thread_named("svc-test-idle").expect("the thread by its name");
        assert_eq!(gives_way(Some(tid)), caller_gives_way);
        let caller_waits = waits_for_disk(None);
        assert!(give_way(Some(tid)));
        assert!(gives_way(Some(tid)));
        assert!(waits_for_disk(Some(tid)), "its disk requests in the idle I/O class too");
        assert_eq!(gives_way(None), caller_gives_way, "only the thread named changed");
        assert_eq!(waits_for_disk(None), caller_waits);
        stop.send(()).unwrap();
        other.join().unwrap();
    }
}
