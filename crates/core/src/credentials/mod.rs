//! What the default scrub treats as a credential, and nothing else: a
//! variable whose name says it holds one (unless its value cannot be one), or
//! whose value carries one, whatever its name. The command line masks the
//! same variables, so what it shows as secret is what a child never gets.
//!
//! The rules are judged on a labelled corpus of realistic environments
//! (`tests/corpus/environment.json`): no credential may pass and no
//! legitimate variable may be removed.
//!
//! - [`names`]: names read as words (`DB_PW`, `apiSecret`), not substrings
//!   (`KEYMAP`, `MAX_TOKENS`); a name that says where something is
//!   (`*_URL`, `*_FILE`, `*_DIR`, `*_KEY_ID`) is a setting;
//! - [`values`]: private keys, URLs with credentials, credentials written
//!   inside other values (`password=…`, `--password …`, curl's `-u`), base64
//!   that decodes to one;
//! - [`tokens`]: providers' token shapes in their full form.

mod names;
mod remembered;
mod tokens;
mod values;

pub use remembered::find_remembered;

/// Why a variable counts as a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// Its name says it holds one, and its value could.
    Name,
    /// Its value carries one, whatever the name.
    Value,
}

/// Whether the variable `name=value` is a credential, and why; `None` when it
/// is not.
///
/// By name: the name says it holds one ([`names`]) and the value could be
/// one: not empty, a switch, a reference to another variable, a mask or
/// placeholder, a path, a GPG fingerprint or an object's key in a store. By value: the value carries one ([`values`]). A variable
/// a web framework serves to every visitor (`NEXT_PUBLIC_*`, …) is public by
/// design, whatever its value.
pub fn find(name: &str, value: &str) -> Option<Finding> {
    if by_name(name, value) {
        Some(Finding::Name)
    } else if by_value(name, value) {
        Some(Finding::Value)
    } else {
        None
    }
}

/// [`Finding::Name`] alone: the name says credential and the value could be
/// one. The pipeline asks this first and [`by_value`] only of what is left,
/// so no value is scanned twice.
pub fn by_name(name: &str, value: &str) -> bool {
    !names::is_public(name)
        && names::says_credential(name, names::Context::Variable)
        && !values::is_harmless(name, value)
}

/// [`Finding::Value`], whatever the name says: the value carries a credential.
pub fn by_value(name: &str, value: &str) -> bool {
    !names::is_public(name) && values::carries_secret(value)
}

/// What the command line shows of a credential instead of its value.
pub const MASK: &str = "<masked>";

/// `name=value` as the command line may show it: `None` when it is no
/// credential ([`find`]); the value with its URLs' passwords hidden when they
/// were the whole of the credential; else [`MASK`].
pub fn masked(name: &str, value: &str) -> Option<String> {
    if find(name, value)? == Finding::Value {
        // Judged without the passwords, shown with them hidden.
        let without = values::replace_url_passwords(value, "").filter(|without| find(name, without).is_none());
        if let Some(shown) = without.and_then(|_| values::replace_url_passwords(value, "****")) {
            return Some(shown);
        }
    }
    Some(MASK.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_judged_with_its_value_and_a_value_alone() {
        assert_eq!(find("DB_PW", "hunter2"), Some(Finding::Name));
        assert_eq!(find("GOOGLE_APPLICATION_CREDENTIALS", "/home/me/key.json"), None);
        assert_eq!(find("MY_SERVICE", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"), Some(Finding::Value));
        assert_eq!(find("GITHUB_HEAD_REF", "sk-fix-login-redirect-loop"), None);
        assert_eq!(
            find("NEXT_PUBLIC_SUPABASE_ANON_KEY", "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYW5vbiJ9.c2lnbmF0dXJl"),
            None
        );
    }

    #[test]
    fn a_credential_is_masked_whole_unless_it_was_only_a_url_password() {
        assert_eq!(masked("EDITOR", "vim"), None);
        assert_eq!(masked("DB_PW", "hunter2").as_deref(), Some(MASK));
        assert_eq!(
            masked("DATABASE_URL", "postgres://app:s3cret@db/app").as_deref(),
            Some("postgres://app:****@db/app")
        );
        // The password hidden, a token is still there: all of it goes.
        let both = "https://u:pw@h/?access_token=ghp_0123456789abcdefghijABCDEFGHIJ012345";
        assert_eq!(masked("MIRROR", both).as_deref(), Some(MASK));
        // A name that says credential hides the value whole, URL or not.
        assert_eq!(masked("DB_PASSWORD", "postgres://app:s3cret@db/app").as_deref(), Some(MASK));
    }
}
