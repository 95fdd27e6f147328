//! The host process's own environment, read the way Node's `process.env`
//! shows it on the main thread, so the binding can skip the slow walk of
//! `process.env` (one interceptor call, lock and `getenv` per variable) when
//! the caller passed that very object.

/// The variables `process.env` shows for these raw `name=value` entries of a
/// C environment, in their order:
/// - an entry without `=` is skipped (libuv's `uv_os_environ` skips it);
/// - the name is everything before the first `=`; an empty name, one that is
///   not UTF-8, or an array index such as `1` is skipped: Node lists it but
///   finds no value for it (`getenv("")` is null, a lossily decoded name is
///   not the one in the environment, and V8 never asks Node for an index);
/// - the value is decoded as UTF-8 with U+FFFD for ill-formed bytes, as
///   V8's `String::NewFromUtf8` does;
/// - of a name given twice, the first entry counts (`getenv` returns it).
pub fn node_view<'a>(entries: impl IntoIterator<Item = &'a [u8]>) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for entry in entries {
        let Some(split) = entry.iter().position(|&byte| byte == b'=') else { continue };
        let Ok(name) = std::str::from_utf8(&entry[..split]) else { continue };
        if name.is_empty() || is_array_index(name) || !seen.insert(name) {
            continue;
        }
        vars.push((name.to_owned(), String::from_utf8_lossy(&entry[split + 1..]).into_owned()));
    }
    vars
}

/// Whether V8 treats `name` as an array index (a canonical decimal below
/// 2³² − 1), which `process.env`'s named-property interceptor never sees.
fn is_array_index(name: &str) -> bool {
    let canonical = name == "0" || (!name.starts_with('0') && !name.is_empty());
    canonical
        && name.bytes().all(|byte| byte.is_ascii_digit())
        && name.parse::<u64>().is_ok_and(|index| index < u64::from(u32::MAX))
}

/// This process's environment as `process.env` shows it (see [`node_view`]).
///
/// Reads the C `environ` directly. The caller must keep other threads from
/// changing the environment meanwhile (`setenv` may move the array): the
/// binding holds the lock Node holds around its own reads and writes.
#[cfg(unix)]
pub fn read() -> Vec<(String, String)> {
    use std::ffi::{c_char, CStr};
    extern "C" {
        // Mutable: the C library replaces it.
        static mut environ: *const *const c_char;
    }
    let mut entries = Vec::new();
    // SAFETY: `environ` is a null-terminated array of NUL-terminated strings,
    // not changed while this loop runs (see above).
    unsafe {
        let mut cursor = std::ptr::addr_of!(environ).read();
        while !cursor.is_null() && !(*cursor).is_null() {
            entries.push(CStr::from_ptr(*cursor).to_bytes());
            cursor = cursor.add(1);
        }
    }
    node_view(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(entries: &[&[u8]]) -> Vec<(String, String)> {
        node_view(entries.iter().copied())
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn splits_at_the_first_equals_sign_and_keeps_the_order() {
        let got = view(&[b"PATH=/usr/bin:/bin", b"EQ=a=b", b"EMPTY=", b"A=1"]);
        assert_eq!(got, pairs(&[("PATH", "/usr/bin:/bin"), ("EQ", "a=b"), ("EMPTY", ""), ("A", "1")]));
    }

    #[test]
    fn skips_what_process_env_cannot_show() {
        let got = view(&[b"NOEQUALS", b"=hidden", b"=C:=C:\\dir", b"BAD\xffNAME=1", b"OK=1"]);
        assert_eq!(got, pairs(&[("OK", "1")]));
    }

    #[test]
    fn array_indices_are_skipped_like_process_env_does() {
        let got = view(&[b"1=one", b"0=zero", b"4294967294=max", b"01=a", b"4294967295=b", b"1a=c", b"-1=d"]);
        assert_eq!(got, pairs(&[("01", "a"), ("4294967295", "b"), ("1a", "c"), ("-1", "d")]));
    }

    #[test]
    fn the_first_of_a_repeated_name_counts() {
        let got = view(&[b"X=first", b"Y=y", b"X=second"]);
        assert_eq!(got, pairs(&[("X", "first"), ("Y", "y")]));
    }

    #[test]
    fn ill_formed_values_are_decoded_with_replacement_characters() {
        let got = view(&[b"V=a\xffb\xe2\x82c"]);
        assert_eq!(got, pairs(&[("V", "a\u{FFFD}b\u{FFFD}c")]));
    }

    #[cfg(unix)]
    #[test]
    fn read_sees_this_process_environment() {
        // What std reads, limited to the entries both readers take alike.
        let mut expected: Vec<(String, String)> = Vec::new();
        for (name, value) in std::env::vars_os() {
            let (Ok(name), Ok(value)) = (name.into_string(), value.into_string()) else { continue };
            if name.is_empty() || name.starts_with('=') || is_array_index(&name) {
                continue;
            }
            if !expected.iter().any(|(seen, _)| *seen == name) {
                expected.push((name, value));
            }
        }
        let got = read();
        for pair in &expected {
            assert!(got.contains(pair), "{pair:?} missing from {got:?}");
        }
        assert!(got.len() >= expected.len());
    }
}
