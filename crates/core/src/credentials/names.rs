//! Names that hold a credential, read as words rather than substrings:
//! `DB_PW`, `MYSQLPASS`, `apiSecret` and `Db_Password` are credentials;
//! `KEYMAP`, `TOKENIZERS_PARALLELISM`, `MAX_TOKENS`, `PASSWORD_MIN_LENGTH`
//! and `TOKEN_URL` are not.
//!
//! A name is split into words at `_`, `-`, `.`, spaces and case changes
//! (`apiSecret` → `api`, `Secret`). It holds a credential when its last word
//! that is not a mere qualifier (`2`, `V2`, `BASE64`, `VALUE`, `LIVE`,
//! `READONLY`, …) is a credential word (`PASSWORD`, `TOKEN`, `KEY`, …), its
//! plural (`API_KEYS`: a list or a rotation) or ends in one (`DBPASS`). Anything after it that says what the variable is about
//! (`_URL`, `_FILE`, `_DIR`, `_ID`, `_LENGTH`, …) makes it a setting instead.
//! A credential word may also come first when only whose credential it is
//! follows: a provider's name (`TOKEN_GITHUB`), or a database's after a
//! password word (`PASSWORD_DB`).

use std::sync::OnceLock;

/// Where a name was found: a variable's own name, a key inside a value
/// (`password=` in a query string, `"private_key":` in JSON), or an HTTP
/// header's name (`X-Api-Key`, `Helicone-Auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Context {
    Variable,
    Embedded,
    Header,
}

/// Words that make a name hold a credential when nothing but qualifiers
/// follows them. Compared after trailing digits are removed (`KEY2`).
const CREDENTIAL_WORDS: &[&str] = &[
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PWD",
    "PW",
    "PASSPHRASE",
    "SECRET",
    "SECRETS",
    "TOKEN",
    "KEY",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "AUTHORIZATION",
    "BEARER",
    "JWT",
    "COOKIE",
    "PAT",
    "SIGNATURE",
    "SIG",
    // Secrets that are not called passwords: a salt, a wallet's or a TOTP
    // generator's seed, a pre-shared key, a card's or a hardware key's PIN.
    "SALT",
    "SEED",
    "PSK",
    "PIN",
];

/// Word endings that make one run-together word a credential word
/// (`DBPASS`, `MYSQLPASSWORD`, `CLIENTSECRET`, `AUTHTOKEN`).
const CREDENTIAL_ENDINGS: &[&str] = &["PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "PASS", "PWD", "APIKEY"];

/// What comes before `KEY` in one run-together word that makes it a
/// credential word (`SECRETKEY`, `AWSSECRETKEY`, `AUTHKEY`); providers'
/// names count too, as the whole word (`OPENAIKEY`). A suffix rule would take
/// `MONKEY`, `HOTKEY` and `TURKEY`; `PASSKEY` names a WebAuthn feature, not a
/// value an environment can hold.
const KEY_KINDS: &[&str] =
    &["SECRET", "PRIVATE", "ACCESS", "AUTH", "MASTER", "SIGNING", "ENCRYPTION", "CLIENT", "LICENSE"];

/// Providers whose name may follow a credential word (`TOKEN_GITHUB`,
/// `KEY_OPENAI`) or end one run-together with `KEY` (`OPENAIKEY`). Generic
/// words (`API`, `REGISTRY`, `VAULT`, `ROOT`) are left out: `TOKEN_API` and
/// `AZURE_KEY_VAULT` name services, not credentials.
const PROVIDERS: &[&str] = &[
    "GITHUB",
    "GH",
    "GITLAB",
    "BITBUCKET",
    "NPM",
    "PYPI",
    "DOCKER",
    "DOCKERHUB",
    "STRIPE",
    "OPENAI",
    "ANTHROPIC",
    "CLAUDE",
    "GEMINI",
    "GROQ",
    "MISTRAL",
    "COHERE",
    "HUGGINGFACE",
    "HF",
    "AWS",
    "GCP",
    "GOOGLE",
    "AZURE",
    "SLACK",
    "DISCORD",
    "TELEGRAM",
    "TWILIO",
    "SENDGRID",
    "MAILGUN",
    "CLOUDFLARE",
    "HEROKU",
    "VERCEL",
    "NETLIFY",
    "SENTRY",
    "DATADOG",
    "SHOPIFY",
    "NOTION",
    "LINEAR",
    "ATLASSIAN",
    "JIRA",
    "DIGITALOCEAN",
    "SUPABASE",
    "FIREBASE",
];

/// Databases and servers whose name may follow a password word
/// (`PASSWORD_DB`, `PWD_MYSQL`). After `TOKEN`, `KEY` or `SECRET` they name
/// a store of those (`TOKEN_DB`, `KEY_REDIS`), so only passwords count.
const SERVERS: &[&str] = &[
    "DB",
    "DATABASE",
    "POSTGRES",
    "POSTGRESQL",
    "PG",
    "MYSQL",
    "MARIADB",
    "MONGO",
    "MONGODB",
    "REDIS",
    "RABBITMQ",
    "AMQP",
    "SMTP",
    "IMAP",
    "LDAP",
    "FTP",
    "SFTP",
    "ADMIN",
];

/// The last labels of host names: top-level domains in wide use and the
/// names private networks use. A credential word followed by a host is that
/// host's credential (`TF_TOKEN_app_terraform_io`), and so is Bundler's
/// `BUNDLE_<host>`. `EU`, `US` and `UK` are left out: after a credential word
/// they are regions (`TOKEN_URL_EU`).
const TOP_LEVEL_DOMAINS: &[&str] = &[
    "COM", "ORG", "NET", "IO", "DEV", "CO", "APP", "CLOUD", "AI", "SH", "ME", "INFO", "BIZ", "TECH", "XYZ", "DE", "FR",
    "NL", "CH", "SE", "JP", "CN", "KR", "IN", "BR", "AU", "CA", "RU", "LOCAL", "INTERNAL", "CORP", "LAN",
];

/// The credential words that are a password.
const PASSWORD_WORDS: &[&str] = &["PASSWORD", "PASSWD", "PASS", "PWD", "PW", "PASSPHRASE"];

/// Run-together words ending in `PASS` or `PWD` that are not credentials;
/// `ASKPASS` names the program that asks for a password (`GIT_ASKPASS`,
/// `SSH_ASKPASS`, `SUDO_ASKPASS`).
const NOT_CREDENTIAL_WORDS: &[&str] =
    &["BYPASS", "COMPASS", "SURPASS", "TRESPASS", "OVERPASS", "UNDERPASS", "ENCOMPASS", "OLDPWD", "ASKPASS"];

/// Words that may follow a credential word without changing what the
/// variable holds: encodings, versions, rotations, environments, modes,
/// access levels and roles.
const QUALIFIERS: &[&str] = &[
    "BASE",
    "B64",
    "BASE64",
    "HEX",
    "VALUE",
    "RAW",
    "ENC",
    "ENCODED",
    "ENCRYPTED",
    "HASH",
    "HASHED",
    "JSON",
    "PEM",
    "DER",
    "DATA",
    "CONTENT",
    "CONTENTS",
    "STRING",
    "STR",
    "TEXT",
    "PLAIN",
    "PLAINTEXT",
    "OLD",
    "NEW",
    "PREV",
    "PREVIOUS",
    "NEXT",
    "CURRENT",
    "PRIMARY",
    "SECONDARY",
    "FALLBACK",
    "FALLBACKS",
    "BACKUP",
    "LEGACY",
    "ROTATED",
    "TERTIARY",
    "DEFAULT",
    // Environments and modes (`API_KEY_LIVE`, `CLIENT_SECRET_SANDBOX`).
    "PROD",
    "PRODUCTION",
    "PRD",
    "PREPROD",
    "DEV",
    "DEVELOPMENT",
    "TEST",
    "TESTING",
    "STAGING",
    "STAGE",
    "STG",
    "QA",
    "UAT",
    "CI",
    "DEMO",
    "LOCAL",
    "LIVE",
    "SANDBOX",
    "INTERNAL",
    "EXTERNAL",
    // Access levels and roles (`DB_PASSWORD_READONLY`, `PG_PASSWORD_REPLICA`).
    "READONLY",
    "RO",
    "RW",
    "READWRITE",
    "REPLICA",
    "ADMIN",
    "V",
    // Regions (`API_KEY_EU`, `DB_PASSWORD_US_EAST`).
    "EU",
    "US",
    "UK",
    "AP",
    "ASIA",
    "APAC",
    "EMEA",
    "AMER",
    "EAST",
    "WEST",
    "NORTH",
    "SOUTH",
    "CENTRAL",
    "NORTHEAST",
    "NORTHWEST",
    "SOUTHEAST",
    "SOUTHWEST",
];

/// Words before `KEY` that make it a name, an index or a public key rather
/// than a secret (`ROUTING_KEY`, `STRIPE_PUBLISHABLE_KEY`, `SSH_HOST_KEY`).
const NOT_SECRET_KEYS: &[&str] = &[
    "PUBLIC",
    "PUBLISHABLE",
    "PUB",
    "HOST",
    "CACHE",
    "SORT",
    "PARTITION",
    "ROUTING",
    "PRIMARY",
    "FOREIGN",
    "IDEMPOTENCY",
    "LOCK",
    "HOT",
    "SHORTCUT",
    "CONFIG",
    "LOOKUP",
    "INDEX",
    "MAP",
    "DEDUP",
    "GROUP",
    "SHARD",
    "RANGE",
    "SEARCH",
    // Keys their providers document as public: a captcha's site key
    // (reCAPTCHA, Turnstile, hCaptcha), an analytics write key (Segment,
    // RudderStack).
    "SITE",
    "WRITE",
    // Public keys: allowed to log in, trusted, known hosts'.
    "AUTHORIZED",
    "TRUSTED",
    "KNOWN",
];

/// Words before `PIN` that make it a pin of something else than a card: a
/// version, an image or a certificate pinned, a hardware pin
/// (`NODE_VERSION_PIN`, `CERT_PIN`, `LED_PIN`).
const NOT_SECRET_PINS: &[&str] =
    &["VERSION", "TOOLCHAIN", "RELEASE", "IMAGE", "DIGEST", "SHA", "COMMIT", "CERT", "CERTIFICATE", "GPIO", "LED"];

/// Credential words whose plural names a list or a rotation of them
/// (`API_KEYS`, `AUTH_TOKENS`, `ADMIN_PASSWORDS`, `APP_PREVIOUS_KEYS`).
const PLURAL_STEMS: &[&str] = &["KEY", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "COOKIE", "JWT"];

/// Words before a plural that make it a count or a kind of text unit rather
/// than a list of secrets (`MAX_TOKENS`, `MAX_NEW_TOKENS`, `STOP_TOKENS`,
/// `NUM_KEYS`).
const COUNTED: &[&str] = &[
    "MAX",
    "MIN",
    "NUM",
    "NUMBER",
    "TOTAL",
    "COUNT",
    "LIMIT",
    "STOP",
    "SPECIAL",
    "CONTEXT",
    "INPUT",
    "OUTPUT",
    "PROMPT",
    "COMPLETION",
    "RESERVED",
];

/// Whether `name` says it holds a credential. Whether its value does is for
/// the caller to check as well (a path under a credential's name is a place).
pub(super) fn says_credential(name: &str, context: Context) -> bool {
    let upper = name.to_uppercase();
    match context {
        // Password managers' sessions: the name is the whole rule.
        Context::Variable if upper == "BW_SESSION" || upper.starts_with("OP_SESSION_") => return true,
        // The working directories, whatever `PWD` suggests; GitLab's first
        // eight characters of the runner's token, printed in every job log.
        Context::Variable if matches!(upper.as_str(), "PWD" | "OLDPWD" | "CI_RUNNER_SHORT_TOKEN") => return false,
        // git's configuration through the environment: `GIT_CONFIG_KEY_<n>`
        // holds a configuration name such as `user.name`.
        Context::Variable if upper.starts_with("GIT_CONFIG_KEY_") => return false,
        // npm's `_auth` and a registry's `"auth"` hold a base64 user:password.
        Context::Embedded if matches!(upper.trim_start_matches('_'), "AUTH" | "AUTHTOKEN") => return true,
        Context::Variable if is_bundler_host(&upper) => return true,
        _ => {}
    }
    let words = words(name);
    let Some(last) = words.iter().rposition(|word| !is_qualifier(word)) else { return false };
    let word = trim_digits(&words[last]);
    if is_secret_at(&words, last)
        // `BASIC_AUTH`, `NPM_AUTH`, `X-Sentry-Auth`: in a variable's or a
        // header's name only, since a key such as make's
        // `--jobserver-auth=3,4` holds none.
        || (context != Context::Embedded && word == "AUTH" && last > 0)
    {
        return true;
    }
    // Whose credential it is, after the credential word: a provider, a
    // password's server, or a host (two or more labels, the last a domain's).
    let end = words.len() - 1;
    let host = end >= 2 && TOP_LEVEL_DOMAINS.contains(&words[end].as_str());
    (last > 0 && {
        let before = trim_digits(&words[last - 1]);
        (PROVIDERS.contains(&word) && is_secret_at(&words, last - 1))
            || (SERVERS.contains(&word) && PASSWORD_WORDS.contains(&before))
    }) || (host && (0..end - 1).any(|at| is_secret_at(&words, at) && !SETTINGS.contains(&trim_digits(&words[at + 1]))))
}

/// Words after a credential word that say where it is or what it is called,
/// not whose it is, before a host (`TOKEN_URL_ACME_IO` is an endpoint).
const SETTINGS: &[&str] = &["URL", "URI", "ENDPOINT", "HOST", "FILE", "PATH", "DIR", "ID", "NAME"];

/// Bundler's credentials for a gem server, `BUNDLE_<host>` with the host's
/// dots written `__` (`BUNDLE_GEMS__CONTRIBSYS__COM=user:password`); its
/// other settings with `__` name a gem or a mirror (`BUNDLE_BUILD__NOKOGIRI`,
/// `BUNDLE_MIRROR__RUBYGEMS__ORG`).
fn is_bundler_host(upper: &str) -> bool {
    upper.strip_prefix("BUNDLE_").is_some_and(|host| {
        let labels: Vec<&str> = host.split("__").collect();
        labels.len() >= 2
            && labels.iter().all(|label| !label.trim_matches('_').is_empty())
            && labels[0] != "MIRROR"
            && TOP_LEVEL_DOMAINS.contains(&labels[labels.len() - 1])
    })
}

/// Whether the word at `at` is a credential word or its plural, not a `KEY`
/// that a word before it makes a name, an index or a public key
/// (`ROUTING_KEY`), nor a plural that one makes a count (`MAX_TOKENS`).
fn is_secret_at(words: &[String], at: usize) -> bool {
    let (word, plural) = singular(trim_digits(&words[at]));
    let before = |list: &[&str]| at > 0 && list.contains(&trim_digits(&words[at - 1]));
    is_credential_word(word)
        && !(word == "KEY" && (before(NOT_SECRET_KEYS) || is_search_key(words, at)))
        && !(word == "PIN" && before(NOT_SECRET_PINS))
        && !(plural && words[..at].iter().any(|word| COUNTED.contains(&trim_digits(word))))
}

/// Whether the `KEY` at `at` is a search-only API key
/// (`ALGOLIA_SEARCH_API_KEY`, `SEARCH_ONLY_API_KEY`), which search services
/// document as the key to put in a web page.
fn is_search_key(words: &[String], at: usize) -> bool {
    words[..at].iter().rev().map(|word| trim_digits(word)).find(|word| !matches!(*word, "API" | "ONLY"))
        == Some("SEARCH")
}

/// `word` without the `S` of a plural of [`PLURAL_STEMS`] (`KEYS`,
/// `ACCESSTOKENS`), and whether it had one.
fn singular(word: &str) -> (&str, bool) {
    match word.strip_suffix('S') {
        Some(stem) if PLURAL_STEMS.iter().any(|plural| stem.ends_with(plural)) => (stem, true),
        _ => (word, false),
    }
}

/// Prefixes of the variables web frameworks build into the pages and apps
/// they serve, as their documentation says: Vite (`VITE_`), Create React App
/// (`REACT_APP_`), Vue CLI (`VUE_APP_`), Gatsby (`GATSBY_`), Next.js, Expo,
/// Nuxt, SvelteKit and Astro (`PUBLIC_`). Public by construction.
const PUBLIC_PREFIXES: &[&str] =
    &["NEXT_PUBLIC_", "EXPO_PUBLIC_", "NUXT_PUBLIC_", "PUBLIC_", "VITE_", "REACT_APP_", "VUE_APP_", "GATSBY_"];

/// Whether `name` is one a web framework ships to every visitor, so its
/// value is public whatever its name says (a Supabase anon key is a JWT, a
/// Firebase web key an `AIza` key); only a secret's own shape under it is a
/// leak.
pub(super) fn is_public(name: &str) -> bool {
    PUBLIC_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
}

/// Whether `name` says it holds HTTP headers (`OTEL_EXPORTER_OTLP_HEADERS`,
/// `HTTP_HEADERS`), whose values are judged as headers' values.
pub(super) fn names_headers(name: &str) -> bool {
    // Asked of most names: the words only of those that hold the letters.
    name.as_bytes().windows(6).any(|six| six.eq_ignore_ascii_case(b"header"))
        && words(name).iter().any(|word| word == "HEADERS" || word == "HEADER")
}

/// What a name says of the values it may hold, beyond whether it holds a
/// credential: read once for [`super::values::is_harmless`].
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Reading {
    /// It names a GPG or PGP key, whose value is then usually a fingerprint,
    /// not key material. `pass` takes its keys' ids in `PASSWORD_STORE_KEY`
    /// and `PASSWORD_STORE_SIGNING_KEY`; other `*_KEY` names holding hex are
    /// left to be secrets.
    pub(super) gpg_key: bool,
    /// It ends in a `KEY` (or `KEYS`) that does not say what kind (`S3_KEY`,
    /// `OBJECT_KEY_2`, `REDIS_KEYS`), which may be an object's key in a
    /// store; `API_KEY` and `S3_SECRET_KEY` say secret.
    pub(super) plain_key: bool,
    /// It ends in a credential word's plural (`API_KEYS`, `AUTH_TOKENS`): a
    /// list, whose value a number only counts.
    pub(super) plural: bool,
    /// The credential word it ends in, before its qualifiers, without digits
    /// and in the singular (`SEED` for `TOTP_SEED_2`), when it says
    /// credential there.
    pub(super) word: Option<String>,
}

impl Reading {
    /// Whether the name says it holds a password (`DB_PASSWORD`,
    /// `MYSQLPASS`, `SMTP_PWD`), not a key or a token.
    pub(super) fn says_password(&self) -> bool {
        self.word.as_deref().is_some_and(|word| PASSWORD_WORDS.iter().any(|password| word.ends_with(password)))
    }
}

/// Reads `name` (see [`Reading`]), splitting it into words once.
pub(super) fn read(name: &str) -> Reading {
    let words = words(name);
    let gpg_key = words.iter().any(|word| matches!(word.as_str(), "GPG" | "PGP" | "GNUPG"))
        || matches!(name.to_uppercase().as_str(), "PASSWORD_STORE_KEY" | "PASSWORD_STORE_SIGNING_KEY");
    let Some(last) = words.iter().rposition(|word| !is_qualifier(word)) else {
        return Reading { gpg_key, ..Reading::default() };
    };
    let (word, plural) = singular(trim_digits(&words[last]));
    let kind = last.checked_sub(1).map(|before| trim_digits(&words[before]));
    Reading {
        gpg_key,
        plain_key: word == "KEY" && !kind.is_some_and(|kind| kind == "API" || KEY_KINDS.contains(&kind)),
        plural,
        word: is_secret_at(&words, last).then(|| word.to_owned()),
    }
}

/// Whether `name` ends in a `KEY` that does not say what kind ([`Reading::plain_key`]).
pub(super) fn names_plain_key(name: &str) -> bool {
    read(name).plain_key
}

fn is_credential_word(word: &str) -> bool {
    if CREDENTIAL_WORDS.contains(&word) {
        return true;
    }
    if let Some(stem) = word.strip_suffix("KEY") {
        if PROVIDERS.contains(&stem) || KEY_KINDS.iter().any(|kind| stem.ends_with(kind)) {
            return true;
        }
    }
    !NOT_CREDENTIAL_WORDS.contains(&word)
        && CREDENTIAL_ENDINGS.iter().any(|ending| word.len() > ending.len() + 1 && word.ends_with(ending))
}

fn is_qualifier(word: &str) -> bool {
    // Asked of every word of every name: [`QUALIFIERS`], sorted once, is
    // searched by halves.
    static SORTED: OnceLock<Vec<&'static str>> = OnceLock::new();
    let sorted = SORTED.get_or_init(|| {
        let mut sorted = QUALIFIERS.to_vec();
        sorted.sort_unstable();
        sorted
    });
    let trimmed = trim_digits(word);
    trimmed.is_empty() || sorted.binary_search(&trimmed).is_ok()
}

fn trim_digits(word: &str) -> &str {
    word.trim_end_matches(|c: char| c.is_ascii_digit())
}

/// The words of a name, upper-cased (as Windows compares names, so `ſecret`
/// is `SECRET`): split at anything but letters and digits, and where the case
/// changes (`apiSecret`, `HTTPServer`).
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name.split(|c: char| !c.is_alphanumeric()).filter(|part| !part.is_empty()) {
        let chars: Vec<char> = part.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let lower_to_upper = chars[i - 1].is_lowercase() && chars[i].is_uppercase();
            let acronym_end = chars[i - 1].is_uppercase()
                && chars[i].is_uppercase()
                && chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            if lower_to_upper || acronym_end {
                words.push(chars[start..i].iter().collect::<String>().to_uppercase());
                start = i;
            }
        }
        words.push(chars[start..].iter().collect::<String>().to_uppercase());
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words_at_separators_and_case_changes() {
        assert_eq!(words("apiSecret"), ["API", "SECRET"]);
        assert_eq!(words("Db_Password"), ["DB", "PASSWORD"]);
        assert_eq!(words("HTTPServer-url.x"), ["HTTP", "SERVER", "URL", "X"]);
        assert_eq!(words("MYSQLPASS"), ["MYSQLPASS"]);
        assert_eq!(words("__"), Vec::<String>::new());
    }

    #[test]
    fn credential_words_at_the_end_make_a_credential() {
        for name in [
            "DB_PW",
            "MYSQLPASS",
            "DBPASS",
            "apiSecret",
            "Db_Password",
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "SECRET_KEY_BASE",
            "CI_JOB_JWT_V2",
            "API_KEY_2",
            "SMTP_PASS",
            "BASIC_AUTH",
            "GITHUB_PAT",
            "clientSecret",
            "HTPASSWD",
            "BW_SESSION",
            "OP_SESSION_my",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(says_credential(name, Context::Variable), "{name}");
        }
    }

    #[test]
    fn settings_about_credentials_are_not_credentials() {
        for name in [
            "KEYMAP",
            "TOKENIZERS_PARALLELISM",
            "MAX_TOKENS",
            "PASSWORD_MIN_LENGTH",
            "PASSWORD_STORE_DIR",
            "TOKEN_URL",
            "AUTH_URL",
            "JWT_ISSUER",
            "COOKIE_DOMAIN",
            "AWS_ACCESS_KEY_ID",
            "AWS_SHARED_CREDENTIALS_FILE",
            "SSH_AUTH_SOCK",
            "STRIPE_PUBLISHABLE_KEY",
            "AMQP_ROUTING_KEY",
            "PWD",
            "OLDPWD",
            "BYPASS",
            "GIT_CONFIG_KEY_0",
            "AUTH",
            "DESKTOP_SESSION",
        ] {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
    }

    #[test]
    fn environments_modes_access_levels_and_rotations_after_the_credential_word_are_qualifiers() {
        for name in [
            "API_KEY_LIVE",
            "PAYPAL_CLIENT_SECRET_SANDBOX",
            "DB_PASSWORD_READONLY",
            "DB_PASSWORD_RO",
            "PG_PASSWORD_REPLICA",
            "MYSQL_PASSWORD_ADMIN",
            "REDIS_PASSWORD_BACKUP",
            "SERVICE_TOKEN_INTERNAL",
            "AUTH_SECRET_FALLBACK",
            "STRIPE_KEY_QA",
            "API_TOKEN_UAT",
            "DEPLOY_TOKEN_CI",
            "DB_PASSWORD_PREPROD",
            "SMTP_PASSWORD_DEFAULT",
            "SECRET_KEY_FALLBACKS",
            "API_KEY_LIVE_2",
        ] {
            assert!(says_credential(name, Context::Variable), "{name}");
        }
        for name in
            ["DB_HOST_REPLICA", "API_URL_LIVE", "STRIPE_KEY_ID_LIVE", "TOKEN_TTL_DEFAULT", "DB_USER_READONLY", "CI"]
        {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
    }

    #[test]
    fn a_plural_is_a_list_of_credentials_unless_it_is_counted() {
        for name in
            ["API_KEYS", "APP_PREVIOUS_KEYS", "AUTH_TOKENS", "ADMIN_PASSWORDS", "ACCESSTOKENS", "SESSION_COOKIES"]
        {
            assert!(says_credential(name, Context::Variable), "{name}");
            assert!(read(name).plural, "{name}");
        }
        for name in [
            "MAX_TOKENS",
            "MAX_NEW_TOKENS",
            "STOP_TOKENS",
            "SPECIAL_TOKENS",
            "CONTEXT_TOKENS",
            "NUM_KEYS",
            "SORT_KEYS",
            "SSH_AUTHORIZED_KEYS",
            "HOTKEYS",
            "MONKEYS",
            "TOKENS_PER_MINUTE",
            "PASSWORDS_FILE",
        ] {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
        assert!(!read("API_KEY").plural);
        assert!(read("REDIS_KEYS").plain_key);
        assert!(!read("API_KEYS").plain_key);
    }

    #[test]
    fn salts_seeds_pre_shared_keys_and_pins_are_credentials_and_pinned_versions_are_not() {
        for name in
            ["AUTH_SALT", "SECURITY_PASSWORD_SALT", "WALLET_SEED", "TOTP_SEED", "WIFI_PSK", "SIM_PIN", "PKCS11_PIN"]
        {
            assert!(says_credential(name, Context::Variable), "{name}");
        }
        for name in
            ["NODE_VERSION_PIN", "CERT_PIN", "LED_PIN", "PIN_MEMORY", "SALT_MASTER", "PSK_IDENTITY", "PYTHONHASHSEED"]
        {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
        assert_eq!(read("TOTP_SEED_2").word.as_deref(), Some("SEED"));
        assert_eq!(read("API_KEYS_OLD").word.as_deref(), Some("KEY"));
        assert_eq!(read("NODE_VERSION_PIN").word, None);
    }

    #[test]
    fn a_password_name_says_password_and_a_key_or_token_name_does_not() {
        for name in ["DB_PASSWORD", "MYSQLPASS", "SMTP_PWD", "GPG_PASSPHRASE", "DB_PASSWORD_READONLY"] {
            assert!(read(name).says_password(), "{name}");
        }
        for name in ["OPENAI_API_KEY", "HF_TOKEN", "JWT_SECRET", "PASSWORD_MIN_LENGTH"] {
            assert!(!read(name).says_password(), "{name}");
        }
    }

    #[test]
    fn askpass_names_a_program_not_a_password() {
        for name in ["GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "SSH_ASKPASS_REQUIRE"] {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
        assert!(says_credential("SSHPASS", Context::Variable));
        assert!(says_credential("GIT_PASS", Context::Variable));
    }

    #[test]
    fn a_region_after_the_credential_word_is_a_qualifier() {
        for name in ["API_KEY_EU", "DB_PASSWORD_US_EAST", "API_KEY_EU1", "STRIPE_SECRET_KEY_APAC_2", "SMTP_PASS_EMEA"] {
            assert!(says_credential(name, Context::Variable), "{name}");
        }
        for name in ["TOKEN_URL_EU", "CACHE_KEY_US_WEST", "AWS_REGION_EU", "US_EAST"] {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
    }

    #[test]
    fn listed_run_together_key_compounds_are_credential_words_and_other_words_ending_in_key_are_not() {
        for name in ["SECRETKEY", "PRIVATEKEY", "AUTHKEY", "ACCESSKEY", "OPENAIKEY", "AWSSECRETKEY", "STRIPE_MASTERKEY"]
        {
            assert!(says_credential(name, Context::Variable), "{name}");
        }
        for name in ["MONKEY", "HOTKEY", "TURKEY", "PASSKEY", "WHISKEY", "ENABLE_PASSKEY", "KEY_ID"] {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
    }

    #[test]
    fn a_credential_word_first_is_a_credential_when_a_provider_or_a_password_s_database_follows() {
        for name in [
            "TOKEN_GITHUB",
            "PASSWORD_DB",
            "SECRET_STRIPE",
            "KEY_OPENAI",
            "PWD_DB",
            "TOKEN_GITHUB_PROD",
            "DEPLOY_TOKEN_GH",
        ] {
            assert!(says_credential(name, Context::Variable), "{name}");
        }
        for name in [
            "TOKEN_URL",
            "PASSWORD_STORE_DIR",
            "PASSWORD_MIN_LENGTH",
            "KEY_ID",
            "SECRET_NAME",
            "PWD",
            "TOKENIZERS_PARALLELISM",
            "TOKEN_GITHUB_URL",
            "PUBLIC_KEY_GITHUB",
            // A store of tokens or keys, not a password.
            "TOKEN_DB",
            "KEY_REDIS",
            "AZURE_KEY_VAULT",
            "TOKEN_API",
        ] {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
    }

    #[test]
    fn site_write_and_search_only_keys_are_public_and_other_api_keys_are_not() {
        for name in [
            "RECAPTCHA_SITE_KEY",
            "TURNSTILE_SITE_KEY",
            "SEGMENT_WRITE_KEY",
            "ALGOLIA_SEARCH_KEY",
            "ALGOLIA_SEARCH_API_KEY",
            "ALGOLIA_SEARCH_ONLY_API_KEY",
        ] {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
        for name in ["RECAPTCHA_SECRET_KEY", "ALGOLIA_ADMIN_API_KEY", "ALGOLIA_API_KEY", "API_KEY", "SEARCH_ADMIN_KEY"]
        {
            assert!(says_credential(name, Context::Variable), "{name}");
        }
    }

    #[test]
    fn frontend_frameworks_prefixes_are_public() {
        for name in
            ["VITE_API_KEY", "REACT_APP_STRIPE_KEY", "VUE_APP_KEY", "GATSBY_TOKEN", "PUBLIC_ANON_KEY", "NEXT_PUBLIC_X"]
        {
            assert!(is_public(name), "{name}");
        }
        for name in ["VITEST_TOKEN", "REACT_TOKEN", "MY_VITE_KEY", "PUBLICATION_KEY"] {
            assert!(!is_public(name), "{name}");
        }
    }

    #[test]
    fn a_header_s_name_is_read_as_a_variable_s_and_a_header_list_s_name_says_so() {
        assert!(says_credential("Helicone-Auth", Context::Header));
        assert!(says_credential("X-Api-Key", Context::Header));
        assert!(!says_credential("X-Scope-OrgID", Context::Header));
        assert!(!says_credential("jobserver-auth", Context::Embedded));
        assert!(names_headers("OTEL_EXPORTER_OTLP_TRACES_HEADERS"));
        assert!(names_headers("HTTP_HEADER"));
        assert!(!names_headers("HEADERLESS_MODE"));
    }

    #[test]
    fn a_credential_for_a_host_is_named_by_the_host() {
        for name in [
            "BUNDLE_GEMS__CONTRIBSYS__COM",
            "BUNDLE_GEMS__ACME___CORP__IO",
            "BUNDLE_GITHUB__COM",
            "TF_TOKEN_app_terraform_io",
            "TF_TOKEN_tfe_acme_io",
        ] {
            assert!(says_credential(name, Context::Variable), "{name}");
        }
        for name in [
            "BUNDLE_MIRROR__RUBYGEMS__ORG",
            "BUNDLE_BUILD__NOKOGIRI",
            "BUNDLE_GEM__TEST",
            "BUNDLE_GITHUB__HTTPS",
            "BUNDLE_PATH",
            "TF_CLI_CONFIG_FILE",
            "TOKEN_URL_ACME",
            "TOKEN_URL_ACME_IO",
            "API_ACME_IO",
        ] {
            assert!(!says_credential(name, Context::Variable), "{name}");
        }
    }

    #[test]
    fn pass_names_its_gpg_key_ids_and_other_signing_keys_are_not_gpg_keys() {
        assert!(read("PASSWORD_STORE_KEY").gpg_key);
        assert!(read("PASSWORD_STORE_SIGNING_KEY").gpg_key);
        assert!(read("GPG_KEY").gpg_key);
        assert!(!read("JWT_SIGNING_KEY").gpg_key);
        assert!(!read("API_KEY").gpg_key);
    }

    #[test]
    fn a_key_that_does_not_say_its_kind_is_a_plain_key() {
        for name in ["S3_KEY", "OBJECT_KEY_2", "KEY"] {
            assert!(names_plain_key(name), "{name}");
        }
        for name in ["API_KEY", "S3_SECRET_KEY", "SSH_PRIVATE_KEY", "DB_PASSWORD", "KEY_ID"] {
            assert!(!names_plain_key(name), "{name}");
        }
    }

    #[test]
    fn keys_inside_values_use_the_same_words_except_a_bare_auth_suffix() {
        assert!(says_credential("db.password", Context::Embedded));
        assert!(says_credential("AccountKey", Context::Embedded));
        assert!(says_credential("SharedAccessKey", Context::Embedded));
        assert!(says_credential("auth", Context::Embedded));
        assert!(!says_credential("SharedAccessKeyName", Context::Embedded));
        assert!(!says_credential("jobserver-auth", Context::Embedded));
        assert!(!says_credential("file.encoding", Context::Embedded));
    }
}
