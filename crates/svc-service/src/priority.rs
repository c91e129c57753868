//! Background threads that give way to requests at once: Linux's idle scheduling class.
//!
//! A thread at a high nice value (10, 19) that has a core keeps it until its time slice runs out:
//! the scheduler protects a running task's slice (up to 1.5 ms on 2 cores), so a request whose
//! thread wakes meanwhile waits for it, once per hand-off between threads. A thread in the idle
//! class is preempted as soon as any other thread wants its core. What that costs: while the cores
//! are busy all the time, idle-class work hardly runs; it catches up when they are not.
//!
//! The one module of the crate with `unsafe` code (the crate denies it elsewhere): the C library's
//! `sched_setscheduler`, which rustix does not wrap.

#![allow(unsafe_code)]

/// A thread of this process by its Linux thread id; `None` names the calling thread.
pub type Thread = Option<i32>;

/// The nice value used where the idle class is refused.
pub const FALLBACK_NICENESS: i32 = 10;

/// Moves `thread` into the idle class or, where that is refused, to [`FALLBACK_NICENESS`]; says
/// whether the idle class took.
pub fn give_way(thread: Thread) -> bool {
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

/// The id of this process's thread named `name`, if there is one (Linux's `/proc`).
pub fn thread_named(name: &str) -> Option<i32> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    tasks.flatten().find_map(|task| {
        let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
        let tid: i32 = task.file_name().to_str()?.parse().ok()?;
        (comm.trim_end() == name).then_some(tid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another thread of the process is found by its name and put in the idle class, without
    /// privileges; the calling thread's class is left as it was.
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
        assert!(give_way(Some(tid)));
        assert!(gives_way(Some(tid)));
        assert_eq!(gives_way(None), caller_gives_way, "only the thread named changed");
        stop.send(()).unwrap();
        other.join().unwrap();
    }
}
