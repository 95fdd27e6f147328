//! `hardening` (step 6): off by default; when asked for, it drops every listed
//! name in any case and exported shell functions, but never what the caller
//! sets explicitly.

use super::{bare, build, explicit, names, reason};
use crate::environment::{EnvironmentSpec, RemovalReason, ScrubPolicy};

fn hardened() -> EnvironmentSpec {
    EnvironmentSpec { scrub: ScrubPolicy { hardening: true, ..ScrubPolicy::default() }, ..bare() }
}

#[test]
fn hardening_is_off_by_default_and_on_when_asked() {
    let parent = [("LD_PRELOAD", "/usr/lib/libjemalloc.so"), ("F", "() { :; }")];
    assert_eq!(names(&build(&parent, &bare())), ["F", "LD_PRELOAD"]);
    assert!(build(&parent, &hardened()).vars.is_empty());
}

#[test]
fn hardening_drops_every_listed_name() {
    // Written out again on purpose, as names a shell would see (`BASH_FUNC_ls%%`,
    // not the glob): what the test expects, not the code's own list.
    let examples = [
        "BASH_ENV",
        "ENV",
        "BASH_FUNC_ls%%",
        "IFS",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "CDPATH",
        "GLOBIGNORE",
        "PROMPT_COMMAND",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "PERL5DB",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "HOSTALIASES",
        "RESOLV_HOST_CONF",
        "MALLOC_CHECK_",
        "GLIBC_TUNABLES",
        "TERMINFO",
        "TERMINFO_DIRS",
        "TERMCAP",
        "ld_preload",
    ];
    let mut parent: Vec<(&str, &str)> = examples.iter().map(|k| (*k, "x")).collect();
    parent.extend([("PATH", "/bin"), ("HOME", "/h"), ("LANG", "C"), ("TERM", "xterm"), ("PYTHONUNBUFFERED", "1")]);
    let env = build(&parent, &hardened());
    assert_eq!(names(&env), ["HOME", "LANG", "PATH", "PYTHONUNBUFFERED", "TERM"]);
    for key in examples {
        assert_eq!(reason(&env, key), Some(RemovalReason::Hardening), "{key}");
    }
}

#[test]
fn hardening_drops_exported_function_values() {
    let env = build(&[("ls", "() { rm -rf ~; }"), ("PARENS", "()x"), ("EMPTY", "")], &hardened());
    assert_eq!(names(&env), ["EMPTY", "PARENS"]);
    assert_eq!(reason(&env, "ls"), Some(RemovalReason::Hardening));
}

#[test]
fn hardening_spares_what_the_caller_sets() {
    let spec =
        EnvironmentSpec { explicit: explicit(&[("NODE_OPTIONS", Some("--max-old-space-size=64"))]), ..hardened() };
    let env = build(&[("NODE_OPTIONS", "--require /evil.js")], &spec);
    assert_eq!(env.get("NODE_OPTIONS"), Some("--max-old-space-size=64"));
    assert_eq!(reason(&env, "NODE_OPTIONS"), Some(RemovalReason::Hardening));
}
