//! What `CreateProcessW` takes instead of an argv and an environment array: one
//! command line, which the child splits again, and one environment block.
//! Plain text rules, compiled everywhere so they are tested everywhere.

use std::path::Path;

/// The command line for `program args…`, NUL-terminated UTF-16.
///
/// Every argument is quoted so that the child's C runtime (and .NET, and
/// `CommandLineToArgvW`) splits it back into exactly the same argv. `cmd.exe`
/// does not split its command line that way: for it, the arguments after `/c`
/// are its script, passed as they are inside one pair of quotes, which `/s`
/// tells it to strip (the rule Node applies for `cmd` too).
pub(crate) fn command_line(program: &Path, args: &[String]) -> Vec<u16> {
    let program = program.to_string_lossy();
    let mut line = String::new();
    quote(&program, &mut line);
    // Split by hand: the rules are Windows' on every system they are tested on.
    let file = program.rsplit(['\\', '/']).next().unwrap_or_default();
    let is_cmd = file.eq_ignore_ascii_case("cmd") || file.eq_ignore_ascii_case("cmd.exe");
    let script_at = is_cmd.then(|| args.iter().position(|arg| arg.eq_ignore_ascii_case("/c"))).flatten();
    for (index, arg) in args.iter().enumerate() {
        line.push(' ');
        match script_at {
            Some(at) if index > at => {
                if index == at + 1 {
                    line.push('"');
                }
                line.push_str(arg);
                if index == args.len() - 1 {
                    line.push('"');
                }
            }
            _ => quote(arg, &mut line),
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
        // Another program's "/c" is an ordinary argument.
        assert_eq!(line(r"C:\Tools\tool.exe", &["/c", "a b"]), r#"C:\Tools\tool.exe /c "a b""#);
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
