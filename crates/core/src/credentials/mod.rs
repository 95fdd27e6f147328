//! What the default scrub treats as a credential, and nothing else: a
//! variable whose name says it holds one (unless its value cannot be one), or
//! whose value carries one, whatever its name. The command line masks the
//! same variables, so what it shows as secret is what a child never gets.
//!
//! The rules are judged on a labelled corpus of realistic environments
//! (`tests/corpus/environment.json`): no credential may pass and no
//! legitimate variable may be removed.
//!
//! - [`names`]: names read as words (`DB_PW`, `apiSecret`, `API_KEYS`), not
//!   substrings (`KEYMAP`, `MAX_TOKENS`); a name that says where something is
//!   (`*_URL`, `*_FILE`, `*_DIR`, `*_KEY_ID`) is a setting; the prefixes
//!   frontend frameworks ship to browsers (`VITE_`, `NEXT_PUBLIC_`, …);
//! - [`values`]: private keys, URLs with credentials or a secret path,
//!   credentials written inside other values (`password=…`, `--password …`,
//!   curl's `-u`, `mysql -p…`, headers, XML, netrc, cookie jars), base64 that
//!   decodes to one; and values that cannot be one (publishable keys,
//!   placeholders);
//! - [`tokens`]: providers' token shapes in their full form, and the
//!   publishable ones.

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
    /// Its name says a web framework serves it to every visitor
    /// (`VITE_*`, `NEXT_PUBLIC_*`, …), and its value still has a secret's own
    /// shape (a provider's secret token, a private key): a leak, not a
    /// public value.
    PublicPrefixSecret,
}

/// Whether the variable `name=value` is a credential, and why; `None` when it
/// is not.
///
/// By name: the name says it holds one ([`names`]) and the value could be
/// one: not empty, a switch, a reference to another variable, a mask or
/// placeholder, a publishable key, a path, a GPG fingerprint or an object's
/// key in a store. By value: the value carries one ([`values`]), or under a
/// name that says it holds HTTP headers, a header's value looks like a key
/// whatever the header is called. A variable
/// a web framework serves to every visitor (`VITE_*`, `NEXT_PUBLIC_*`, …) is
/// public by construction, and only a secret's own shape in it counts.
pub fn find(name: &str, value: &str) -> Option<Finding> {
    if names::is_public(name) {
        values::carries_secret_shape(value).then_some(Finding::PublicPrefixSecret)
    } else if names::says_credential(name, names::Context::Variable) && !values::is_harmless(name, value) {
        Some(Finding::Name)
    } else if values::carries_secret(value) || (names::names_headers(name) && values::has_secret_header(value)) {
        Some(Finding::Value)
    } else {
        None
    }
}

/// What the command line shows of a credential instead of its value.
pub const MASK: &str = "<masked>";

/// `name=value` as the command line may show it: `None` when it is no
/// credential ([`find`]); the value with its URLs' passwords hidden when they
/// were the whole of the credential; else [`MASK`].
pub fn masked(name: &str, value: &str) -> Option<String> {
    if matches!(find(name, value)?, Finding::Value | Finding::PublicPrefixSecret) {
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
    fn a_public_prefix_passes_any_value_but_a_secret_s_own_shape() {
        for (name, value) in [
            ("VITE_API_KEY", "Zq8Lw3Xv9Tp2Nc7Rb4HmZq8Lw3Xv9Tp2"),
            ("REACT_APP_FIREBASE_API_KEY", "AIzaSyD-1234567890abcdefghijklmnopqrstu"),
            ("VITE_STRIPE_KEY", "pk_live_51H8xYzAbCdEfGhIjKlMnOpQr"),
            ("PUBLIC_API_URL", "https://api.acme.io/v1?key=Zq8Lw3Xv9Tp2"),
        ] {
            assert_eq!(find(name, value), None, "{name}");
        }
        for (name, value) in [
            ("VITE_STRIPE_SECRET_KEY", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"),
            ("REACT_APP_TOKEN", "ghp_0123456789abcdefghijABCDEFGHIJklmnop"),
            ("GATSBY_KEY", "-----BEGIN PRIVATE KEY-----\nMIIE"),
            ("PUBLIC_DATABASE_URL", "postgres://app:s3cret@db/app"),
        ] {
            assert_eq!(find(name, value), Some(Finding::PublicPrefixSecret), "{name}");
        }
        assert_eq!(
            masked("PUBLIC_DATABASE_URL", "postgres://app:s3cret@db/app").as_deref(),
            Some("postgres://app:****@db/app")
        );
        assert_eq!(masked("REACT_APP_TOKEN", "ghp_0123456789abcdefghijABCDEFGHIJklmnop").as_deref(), Some(MASK));
    }

    #[test]
    fn a_header_list_s_values_are_judged_as_headers_only_under_a_name_that_says_headers() {
        let list = "x-honeycomb-team=Kq3bT9xWc2LmN8pRz4YvHd";
        assert_eq!(find("OTEL_EXPORTER_OTLP_HEADERS", list), Some(Finding::Value));
        assert_eq!(find("OTEL_RESOURCE_ATTRIBUTES", "service.instance.id=Kq3bT9xWc2LmN8pRz4YvHd"), None);
    }

    #[test]
    fn a_publishable_key_under_a_name_that_says_key_is_not_a_credential() {
        assert_eq!(find("STRIPE_CLIENT_KEY", "pk_live_51H8xYzAbCdEfGhIjKlMnOpQr"), None);
        assert_eq!(find("MAPBOX_ACCESS_TOKEN", "pk.eyJ1IjoiYWNtZSIsImEiOiJjbHgifQ.AbCdEf-12"), None);
        assert_eq!(find("MAPBOX_ACCESS_TOKEN", "sk.eyJ1IjoiYWNtZSIsImEiOiJjbHgifQ.AbCdEf-12"), Some(Finding::Name));
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
