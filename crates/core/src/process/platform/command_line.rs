//! What `CreateProcessW` takes instead of an argv and an environment array: one
//! command line, which the child splits again, and one environment block.
//! Plain text rules, compiled everywhere so they are tested everywhere.

use std::path::Path;

/// The command line for `program args…`, NUL-terminated UTF-16.
///
/// Every argument is quoted so that the child's C runtime (and .NET, and
/// `CommandLineToArgvW`) splits it back into exactly the same argv. `cmd.exe`
/// does not split its command line that way: run as the `cmd` shell (`/d /s
/// /c` and one script), its script goes as it is inside one pair of quotes,
/// which `/s` tells it to strip (the rule Node applies for `cmd` too). Any
/// other call of `cmd.exe` is quoted like every program's.
pub(crate) fn command_line(program: &Path, args: &[String]) -> Vec<u16> {
    let program = program.to_string_lossy();
    let mut line = String::new();
    quote(&program, &mut line);
    // Split by hand: the rules are Windows' on every system they are tested on.
    let file = program.rsplit(['\\', '/']).next().unwrap_or_default();
    let is_cmd = file.eq_ignore_ascii_case("cmd") || file.eq_ignore_ascii_case("cmd.exe");
    let as_shell =
        is_cmd && args.len() == 4 && args[..3].iter().zip(["/d", "/s", "/c"]).all(|(a, b)| a.eq_ignore_ascii_case(b));
    for (index, arg) in args.iter().enumerate() {
        line.push(' ');
        if as_shell && index == 3 {
            line.push('"');
            line.push_str(arg);
            line.push('"');
        } else {
            quote(arg, &mut line);
        }
    }
    line.encode_utf16().chain(Some(0)).collect()
}

/// Appends `arg` so that it reads back as one argument: quoted when empty or
/// when it holds a space or tab, backslashes doubled only where they precede
/// a quote, and quotes escaped.
fn quote(arg: &str, line: &mut String) {
    let quoted = arg.is_empty() || arg.contains([' ', '\t', '\n', '\u{b}']);
    if quoted {
        line.push('"');
    }
    let mut backslashes = 0;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                // Each backslash before a quote is doubled, and the quote escaped.
                line.extend(std::iter::repeat_n('\\', backslashes + 1));
                backslashes = 0;
            }
            _ => backslashes = 0,
        }
        line.push(c);
    }
    if quoted {
        // The closing quote must not be escaped by trailing backslashes.
        line.extend(std::iter::repeat_n('\\', backslashes));
        line.push('"');
    }
}

/// Whether `args` can be given to `program` as Windows starts it. A batch
/// file (`.bat`, `.cmd`) is run by `cmd.exe`, which reads its command line
/// by its own rules, not the C runtime's: an argument holding one of its
/// special characters could run a command of its own ("BatBadBut"). Such
/// arguments are refused; `shell: 'cmd'` is the way to give `cmd` a script.
pub(crate) fn batch_arguments_are_safe(program: &Path, args: &[String]) -> bool {
    let program = program.to_string_lossy();
    let extension = program.rsplit_once('.').map(|(_, ext)| ext).unwrap_or_default();
    let batch = extension.eq_ignore_ascii_case("bat") || extension.eq_ignore_ascii_case("cmd");
    !batch || !args.iter().any(|arg| arg.contains(['"', '%', '&', '|', '^', '<', '>', '!', '\r', '\n']))
}

/// The environment block for `env`: `NAME=value` entries, each NUL-terminated,
/// sorted by name ignoring case as Windows expects, and one more NUL at the
/// end (an empty block is two NULs).
pub(crate) fn environment_block(env: &[(String, String)]) -> Vec<u16> {
    let mut sorted: Vec<&(String, String)> = env.iter().collect();
    sorted.sort_by_cached_key(|(name, _)| name.to_uppercase());
    let mut block = Vec::new();
    for (name, value) in sorted {
        block.extend(name.encode_utf16());
        block.push(u16::from(b'='));
        block.extend(value.encode_utf16());
        block.push(0);
    }
    if block.is_empty() {
        block.push(0);
    }
    block.push(0);
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(program: &str, args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        let wide = command_line(Path::new(program), &args);
        String::from_utf16(&wide[..wide.len() - 1]).unwrap()
    }

    /// `CommandLineToArgvW`'s rules for the arguments after the program name
    /// (backslashes before a quote, quotes, spaces), as the oracle.
    fn split(line: &str) -> Vec<String> {
        let mut args = Vec::new();
        let mut chars = line.chars().peekable();
        loop {
            while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                chars.next();
            }
            if chars.peek().is_none() {
                return args;
            }
            let (mut arg, mut quoted) = (String::new(), false);
            while let Some(&c) = chars.peek() {
                if !quoted && (c == ' ' || c == '\t') {
                    break;
                }
                chars.next();
                match c {
                    '\\' => {
                        let mut count = 1;
                        while chars.peek() == Some(&'\\') {
                            chars.next();
                            count += 1;
                        }
                        if chars.peek() == Some(&'"') {
                            arg.extend(std::iter::repeat_n('\\', count / 2));
                            if count % 2 == 1 {
                                chars.next();
                                arg.push('"');
                            }
                        } else {
                            arg.extend(std::iter::repeat_n('\\', count));
                        }
                    }
                    '"' if quoted && chars.peek() == Some(&'"') => {
                        chars.next();
                        arg.push('"');
                    }
                    '"' => quoted = !quoted,
                    c => arg.push(c),
                }
            }
            args.push(arg);
        }
    }

    #[test]
    fn arguments_read_back_exactly_as_given() {
        let cases: &[&[&str]] = &[
            &["plain"],
            &[""],
            &["two words", "tab\there"],
            &[r#"say "hi""#, r"C:\dir\", r"trailing\\", r#"\"quoted\""#],
            &["é € 😀", "a=b", "%PATH%", "^&|<>"],
        ];
        for args in cases {
            let written = line(r"C:\Tools\echo args.exe", args);
            let mut read = split(&written);
            assert_eq!(read.remove(0), r"C:\Tools\echo args.exe", "{written}");
            assert_eq!(read, *args, "{written}");
        }
    }

    #[test]
    fn cmd_gets_its_script_verbatim_inside_one_pair_of_quotes() {
        assert_eq!(
            line(r"C:\Windows\System32\cmd.exe", &["/d", "/s", "/c", r#"echo "a b" & exit /b 3"#]),
            r#"C:\Windows\System32\cmd.exe /d /s /c "echo "a b" & exit /b 3""#
        );
        // Another program's "/c" is an ordinary argument, and so is a
        // direct call of cmd.exe that is not the cmd shell's.
        assert_eq!(line(r"C:\Tools\tool.exe", &["/c", "a b"]), r#"C:\Tools\tool.exe /c "a b""#);
        assert_eq!(line("cmd.exe", &["/c", "type", "a b"]), r#"cmd.exe /c type "a b""#);
    }

    #[test]
    fn batch_files_take_no_arguments_cmd_would_read_as_commands() {
        let safe = |program: &str, args: &[&str]| {
            let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
            batch_arguments_are_safe(Path::new(program), &args)
        };
        assert!(safe(r"C:\npm\npm.cmd", &["install", "--save", "left-pad"]));
        for bad in [r#""&calc"#, "a&b", "%PATH%", "x|y", "a^b", "<in", ">out", "!v!", "two\nlines"] {
            assert!(!safe(r"C:\npm\npm.CMD", &[bad]), "{bad}");
            assert!(!safe(r"C:\tools\run.bat", &[bad]), "{bad}");
        }
        // Other programs get the C runtime's quoting, which is exact.
        assert!(safe(r"C:\tools\tool.exe", &[r#""&calc"#]));
    }

    #[test]
    fn the_environment_block_is_sorted_ignoring_case_and_double_nul_terminated() {
        let env = vec![("b".to_string(), "2".to_string()), ("Path".into(), r"C:\bin".into()), ("A".into(), "é".into())];
        let block = environment_block(&env);
        let text = String::from_utf16(&block).unwrap();
        assert_eq!(text, "A=é\0b=2\0Path=C:\\bin\0\0");
        assert_eq!(environment_block(&[]), [0, 0]);
    }
}
