//! `dsh-shell-env-supervisor`: the one process per host that starts, contains
//! and ends its commands (see the core's `supervisor` module). The host starts
//! it with its socket on stdin; it takes no arguments.

#[cfg(target_os = "linux")]
fn main() {
    dsh_shell_env_core::supervisor::main()
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("dsh-shell-env-supervisor: only Linux is supported");
    std::process::exit(127);
}
