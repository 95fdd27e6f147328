//! What the default scrub treats as a credential: names that usually hold one,
//! and values shaped like one whatever their name. The command line masks the
//! same variables, so what it shows as secret is what a child never gets.

/// Case-insensitive globs of names that usually hold a credential: keys,
/// passwords, tokens, credentials, authentication settings, cookies,
/// webhooks, data source names with their passwords, JWTs, personal access
/// tokens, password-manager sessions and agent sockets.
pub const CREDENTIAL_NAMES: &[&str] = &[
    "*KEY*",
    "*PASSWORD*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*_PASS",
    "*_PASS_*",
    "*_PWD",
    "*_PWD_*",
    "*CREDENTIAL*",
    "*_AUTH",
    "*_AUTH_*",
    "AUTH_*",
    "*AUTHORIZATION*",
    "*COOKIE*",
    "*WEBHOOK*",
    "*DSN*",
    "*JWT*",
    "*_PAT",
    "BW_SESSION",
    "OP_SESSION_*",
    "GPG_AGENT_INFO",
    "*_AGENT_SOCK",
];

/// Whether `value` holds a credential, whatever the variable is called: a URL
/// with a password in it (`postgres://user:pw@host`), or a word shaped like a
/// well-known token (GitHub `ghp_…`/`github_pat_…`, GitLab `glpat-…`, `sk-…`
/// API keys, Slack `xox?-…`, AWS `AKIA…`/`ASIA…`, npm `npm_…`, a JWT).
pub fn is_secret_value(value: &str) -> bool {
    has_url_password(value) || value.split(|c: char| !is_token_char(c)).any(is_token_shaped)
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// A `scheme://user:password@…` anywhere in `value`, with a non-empty password.
fn has_url_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let authority = &rest[..rest.find(['/', '?', '#', ' ', '\t', '\n']).unwrap_or(rest.len())];
        match authority.rfind('@') {
            Some(end) => authority[..end].split_once(':').is_some_and(|(_, password)| !password.is_empty()),
            None => false,
        }
    })
}

/// One word of a value (letters, digits, `_`, `-`, `.`) against the token shapes.
fn is_token_shaped(word: &str) -> bool {
    // Every shape starts with one of these letters and is at least 15 bytes
    // long (`xoxb-` and ten more): most words of most values end here.
    if word.len() < 15 || !matches!(word.as_bytes()[0], b'g' | b's' | b'x' | b'A' | b'n' | b'e') {
        return false;
    }
    let tail = |prefix: &str, min: usize, allowed: fn(char) -> bool| {
        word.strip_prefix(prefix).is_some_and(|rest| rest.len() >= min && rest.chars().all(allowed))
    };
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let dashed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let slack = |c: char| c.is_ascii_alphanumeric() || c == '-';
    ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"].iter().any(|prefix| tail(prefix, 20, word_char))
        || tail("glpat-", 20, dashed)
        || tail("sk-", 20, dashed)
        || ["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxr-", "xoxs-"].iter().any(|prefix| tail(prefix, 10, slack))
        || aws_access_key(word)
        || (word.len() == 40 && tail("npm_", 36, |c| c.is_ascii_alphanumeric()))
        || is_jwt(word)
}

/// `AKIA` or `ASIA` and 16 upper-case letters or digits.
fn aws_access_key(word: &str) -> bool {
    word.len() == 20
        && (word.starts_with("AKIA") || word.starts_with("ASIA"))
        && word[4..].chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Three base64url segments, the first a JSON object's encoding (`eyJ…`).
fn is_jwt(word: &str) -> bool {
    if !word.starts_with("eyJ") {
        return false;
    }
    let base64url = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let mut segments = word.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (segments.next(), segments.next(), segments.next(), segments.next())
    else {
        return false;
    };
    header.len() >= 8 && payload.len() >= 8 && [header, payload, signature].into_iter().all(base64url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_with_a_password_are_secret() {
        for value in [
            "postgres://app:s3cret@db.internal:5432/app",
            "mongodb+srv://user:pw@cluster0.example.net/?retryWrites=true",
            "proxy=http://me:hunter2@proxy:3128",
        ] {
            assert!(is_secret_value(value), "{value}");
        }
        for value in ["https://example.com/a:b@c", "https://user@example.com/", "ssh://host:22/repo", "a:b@c"] {
            assert!(!is_secret_value(value), "{value}");
        }
    }

    #[test]
    fn well_known_token_shapes_are_secret() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        for value in [
            "ghp_0123456789abcdefghijABCDEFGHIJ",
            "github_pat_11ABCDEFG0123456789_abcdefghij",
            "glpat-0123456789abcdefghij",
            "sk-proj-0123456789abcdefghijklmn",
            "xoxb-1234567890-abcdef",
            "xoxp-0123456789",
            "AKIAIOSFODNN7EXAMPLE",
            "npm_0123456789abcdefghijABCDEFGHIJ012345",
            jwt,
            &format!("Bearer {jwt}"),
        ] {
            assert!(is_secret_value(value), "{value}");
        }
        for value in [
            "sk-short",
            "ghp_",
            "AKIA",
            "npm_install",
            "eyJ.not.jwt",
            "/usr/local/bin:/usr/bin",
            "en_US.UTF-8",
            "xterm-256color",
        ] {
            assert!(!is_secret_value(value), "{value}");
        }
    }
}
