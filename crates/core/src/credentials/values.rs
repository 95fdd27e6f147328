//! Values that carry a credential, whatever their variable is called, and
//! values that cannot be one, whatever their variable is called.
//!
//! A value carries a credential when it holds:
//! - a private key (a PEM block, a PuTTY key file);
//! - a URL with a password, with a user name shaped like a token, or whose
//!   path is the secret (a webhook, a random segment after `hooks`);
//! - a provider's token in its full form ([`super::tokens`]);
//! - a key that names a credential with a value: `Password=…;` in a
//!   connection string, `?token=…` in a query, `-Ddb.password=…` in JVM
//!   options, `--password …` or curl's `-u user:password` in options,
//!   `"private_key": "…"` in JSON, `password: …` in YAML,
//!   `<password>…</password>` in XML, netrc's `password …`, a `.pgpass`
//!   line, a name/value pair naming one;
//! - a command's own password option (`mysql -p…`, `sshpass -p`,
//!   `docker login -p`);
//! - an HTTP header carrying one: an authorization scheme with credentials
//!   anywhere, or in `-H`/`--header` and header lists a header whose value
//!   looks like a key;
//! - a cookie jar;
//! - base64 that decodes to text carrying one (a kubeconfig, a JSON key, a
//!   `.env`), on one line or in lines.

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, Engine};

use super::names::{self, Context};
use super::tokens;

/// How deep base64 inside base64 is decoded.
const MAX_DEPTH: u8 = 2;

/// The shortest base64 word worth decoding: 18 bytes of text.
const MIN_BLOB: usize = 24;

/// Hosts and paths of webhooks whose URL is the credential: chat (Slack,
/// Discord, Teams, Feishu and Lark bots), automation (Zapier, IFTTT), build
/// hooks (Netlify, Vercel). What follows them is the secret.
const WEBHOOKS: &[&str] = &[
    "hooks.slack.com/services/",
    "hooks.slack.com/workflows/",
    "discord.com/api/webhooks/",
    "discordapp.com/api/webhooks/",
    "webhook.office.com/webhookb2/",
    "outlook.office.com/webhook/",
    "open.feishu.cn/open-apis/bot/",
    "open.larksuite.com/open-apis/bot/",
    "hooks.zapier.com/hooks/catch/",
    "maker.ifttt.com/trigger/",
    "api.netlify.com/build_hooks/",
    "api.vercel.com/v1/integrations/deploy/",
];

/// Whether `value` carries a credential (see the module documentation).
pub(super) fn carries_secret(value: &str) -> bool {
    carries(value, 0)
}

/// Whether `value` carries a credential by its own shape, whatever surrounds
/// it: a private key, a URL with a password or a token for a user, or a
/// provider's secret token ([`tokens::is_secret_shape`]). What a value served
/// to browsers may hold is judged by this alone.
pub(super) fn carries_secret_shape(value: &str) -> bool {
    has_private_key(value)
        || has_url_credentials(value)
        || has_secret_path(value)
        || words(value, is_token_char).any(tokens::is_secret_shape)
        || tokens::has_telegram_bot_token(value)
}

fn carries(value: &str, depth: u8) -> bool {
    // Each check runs only when the characters it looks for are there.
    let present = Present::of(value);
    let dash = present.has(b'-');
    (dash && has_private_key(value))
        || (present.all("://") && (has_url_credentials(value) || has_secret_path(value)))
        || (dash && (has_user_password(value) || has_inline_password(value)))
        || (dash && option_headers(value).any(|(name, inner)| is_secret_header(name, inner)))
        || ((present.has(b'B') || present.has(b'b')) && has_auth_scheme(value))
        || ((present.all("domain") || present.has(b'\t')) && has_cookie_jar(value))
        || words(value, is_token_char).any(tokens::is_token)
        || (present.has(b':') && tokens::has_telegram_bot_token(value))
        || pairs(value, present)
            .any(|(key, inner)| names::says_credential(key, Context::Embedded) && !is_harmless(key, inner))
        || (depth < MAX_DEPTH && words(value, is_base64_char).any(|word| decodes_to_secret(word, depth)))
        || (depth < MAX_DEPTH
            && present.has(b'\n')
            && base64_blocks(value).iter().any(|block| decodes_to_secret(block, depth)))
}

/// The ASCII characters a value holds, found in one pass, so that a check
/// looking for characters the value lacks costs nothing: most values hold
/// no `<`, no tab, no `://`.
#[derive(Clone, Copy)]
struct Present(u128);

impl Present {
    fn of(value: &str) -> Self {
        Self(value.bytes().filter(u8::is_ascii).fold(0, |set, byte| set | 1 << byte))
    }

    fn has(self, byte: u8) -> bool {
        byte.is_ascii() && self.0 & 1 << byte != 0
    }

    /// Whether every character of `text` is present (in any order).
    fn all(self, text: &str) -> bool {
        text.bytes().all(|byte| self.has(byte))
    }
}

/// Base64 written in lines, joined: each run of two or more lines made only
/// of base64 (coreutils' `base64` writes 76 columns, openssl's 64, with
/// `\n` or `\r\n`), whose line breaks may cut a key such as `DB_PASSWORD=`
/// in two.
fn base64_blocks(value: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    if !value.contains('\n') {
        return blocks;
    }
    let (mut block, mut lines) = (String::new(), 0);
    for line in value.lines().map(str::trim).chain([""]) {
        if !line.is_empty() && line.chars().all(is_base64_char) {
            block.push_str(line);
            lines += 1;
        } else {
            if lines >= 2 {
                blocks.push(std::mem::take(&mut block));
            }
            block.clear();
            lines = 0;
        }
    }
    blocks
}

/// Whether `value`, a list of HTTP headers (`k1=v1,k2=v2` as OpenTelemetry
/// takes them, `Name: value` lines, a JSON map), has a header that carries a
/// credential ([`is_secret_header`]).
pub(super) fn has_secret_header(value: &str) -> bool {
    pairs(value, Present::of(value)).any(|(name, inner)| is_secret_header(name, inner))
}

/// Whether the header `name: value` carries a credential: its name says so
/// (`X-Api-Key`), or its value looks like a key whatever the name
/// (Honeycomb's `x-honeycomb-team`): 16 or more characters of a token's
/// alphabet mixing letters and digits, not a UUID (a tenant's or a request's
/// id).
fn is_secret_header(name: &str, value: &str) -> bool {
    let value = value.trim().trim_matches(['"', '\'']);
    (names::says_credential(name, Context::Header) && !is_harmless(name, value))
        || (value.len() >= 16
            && value.chars().all(|c| is_token_char(c) || matches!(c, '+' | '/' | '='))
            && tokens::looks_random(value)
            && !is_uuid(value))
}

/// The headers given to `-H` and `--header` in options (curl, wget, httpie's
/// `--header`): `-H "Authorization: Bearer …"`, `--header='X-Key: …'`.
fn option_headers(value: &str) -> impl Iterator<Item = (&str, &str)> {
    // Most values give no header: they cost two scans, not a search.
    let given = if has(value, "-H") || has(value, "--header") { value } else { "" };
    let flags = occurrences(given, "-H").map(|at| (at, "-H"));
    flags.chain(occurrences(given, "--header").map(|at| (at, "--header"))).filter_map(move |(at, flag)| {
        let starts_word = given[..at].chars().next_back().is_none_or(|c| c.is_whitespace() || c == '"' || c == '\'');
        let rest = given[at + flag.len()..].strip_prefix('=').unwrap_or(&given[at + flag.len()..]);
        let rest = rest.trim_start();
        let header = match rest.chars().next() {
            Some(quote @ ('"' | '\'')) => rest[1..].split(quote).next().unwrap_or_default(),
            _ => rest.split(char::is_whitespace).next().unwrap_or_default(),
        };
        let (name, inner) = header.split_once(':')?;
        (starts_word && !name.is_empty() && !name.contains(char::is_whitespace)).then_some((name, inner.trim()))
    })
}

/// An HTTP authorization scheme and its credentials anywhere in `value`:
/// `Bearer <token>`, `Basic <base64 of user:password>`, with a space or, in
/// an OpenTelemetry header list, `%20`. A bare scheme, a reference or a word
/// after it (`the Bearer header`) is not one.
fn has_auth_scheme(value: &str) -> bool {
    value.match_indices(['B', 'b']).any(|(at, _)| {
        ["bearer", "basic"].into_iter().any(|scheme| {
            let named = value.get(at..at + scheme.len()).is_some_and(|word| word.eq_ignore_ascii_case(scheme));
            if !named {
                return false;
            }
            let rest = &value[at + scheme.len()..];
            let Some(rest) = rest.strip_prefix(' ').or_else(|| rest.strip_prefix("%20")) else { return false };
            let credential =
                &rest[..rest.find(|c: char| !is_token_char(c) && !"+/=".contains(c)).unwrap_or(rest.len())];
            if is_harmless("", credential) {
                return false;
            }
            if scheme == "basic" {
                is_encoded_user_password(credential)
            } else {
                credential.len() >= 12 && (tokens::looks_random(credential) || tokens::is_token(credential))
            }
        })
    })
}

/// Base64 of `user:password`, as HTTP Basic authentication sends it.
fn is_encoded_user_password(text: &str) -> bool {
    use base64::engine::general_purpose::STANDARD;
    text.len() >= 8
        && STANDARD.decode(text).is_ok_and(|bytes| {
            String::from_utf8(bytes).is_ok_and(|decoded| {
                decoded.split_once(':').is_some_and(|(user, password)| {
                    !user.is_empty() && !password.is_empty() && !decoded.chars().any(char::is_control)
                })
            })
        })
}

/// Whether `value`, under a name that says credential, still cannot be one:
/// empty, a switch (`true`, `no`, `1`), a reference to another variable
/// (`${DB_PASSWORD}`), a mask or placeholder (and, but for a password, a
/// local model server's documented stand-in key), a key documented as
/// publishable (Stripe's `pk_live_…`, Mapbox's `pk.…`), a path
/// (`GOOGLE_APPLICATION_CREDENTIALS` names a file), a GPG key's fingerprint,
/// under a plain `*_KEY` an object store's key (`uploads/2024/file.txt`), or
/// under a plural a count or (a plain `*_KEYS`) a list without anything
/// random in it, under a `SEED` a number, under a `PIN` anything not shaped
/// like one.
pub(super) fn is_harmless(name: &str, value: &str) -> bool {
    let value = value.trim().trim_matches(['"', '\'']);
    const SWITCHES: &[&str] =
        &["", "0", "1", "true", "false", "yes", "no", "on", "off", "none", "null", "enabled", "disabled"];
    SWITCHES.iter().any(|switch| value.eq_ignore_ascii_case(switch))
        || value.starts_with('$')
        || (value.starts_with('%') && value.ends_with('%'))
        || value.chars().all(|c| c == '*')
        || is_placeholder(value)
        || tokens::is_publishable(value)
        || is_path(value)
        || is_harmless_for(&names::read(name), value)
}

/// The part of [`is_harmless`] that depends on what the name says.
fn is_harmless_for(name: &names::Reading, value: &str) -> bool {
    (is_documented_placeholder(value) && !name.says_password())
        || (name.gpg_key && (is_fingerprint(value) || value.split_whitespace().all(is_fingerprint)))
        || (name.plain_key && value.contains('/') && is_relative_file(value))
        || (name.plural && (value.chars().all(|c| c.is_ascii_digit()) || (name.plain_key && is_list_of_names(value))))
        || match name.word.as_deref() {
            // A random generator's seed is a number (`RANDOM_SEED=42`).
            Some("SEED") => {
                value.eq_ignore_ascii_case("random") || value.trim_start_matches('-').parse::<u64>().is_ok()
            }
            Some("PIN") => !is_pin(value),
            _ => false,
        }
}

/// What a PIN looks like: four or more letters and digits, nothing else
/// (`4821`, `Hsm4Pin2024`); a GPIO pin's `13` or a version's `3.12` is not one.
fn is_pin(value: &str) -> bool {
    value.len() >= 4 && value.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Under a plural plain key (`REDIS_KEYS`), a list with nothing random in
/// it: names or patterns of keys in a store (`session:*,cache:*`), where a
/// list of secrets (`APP_PREVIOUS_KEYS=base64:…`) has random parts.
fn is_list_of_names(value: &str) -> bool {
    !words(value, is_token_char).any(|word| word.len() >= 8 && tokens::looks_random(word))
}

/// Where `needle` occurs in `value`, found by its first character (a
/// `memchr`): on the short values environments hold, far cheaper than the
/// substring searcher `str::find` builds at every call.
fn occurrences<'a>(value: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    let first = needle.chars().next().unwrap_or_default();
    value.match_indices(first).map(|(at, _)| at).filter(move |&at| value[at..].starts_with(needle))
}

/// Whether `needle` occurs in `value` ([`occurrences`]).
fn has(value: &str, needle: &str) -> bool {
    occurrences(value, needle).next().is_some()
}

/// Four or more X's and separators only, as `XXXXX-XXXXX-XXXXX-XXXXX`: the
/// placeholder actions/setup-node sets in `NODE_AUTH_TOKEN` so that an
/// `.npmrc`'s `${NODE_AUTH_TOKEN}` expands; npm fails without it. A lone `x`
/// stays a stand-in for a secret.
fn is_placeholder(value: &str) -> bool {
    value.chars().filter(|c| matches!(c, 'x' | 'X')).count() >= 4
        && value.chars().all(|c| matches!(c, 'x' | 'X' | '-' | '_' | '.' | ' '))
}

/// The keys local model servers document for clients that must send one
/// while the server checks none: vLLM's `EMPTY`, llama.cpp's
/// `sk-no-key-required`, Ollama's `ollama`, LM Studio's `lm-studio`, and the
/// stand-ins their guides use. Compared ignoring case.
const DOCUMENTED_PLACEHOLDERS: &[&str] = &[
    "empty",
    "sk-no-key-required",
    "no-key-required",
    "not-needed",
    "ollama",
    "lm-studio",
    "dummy",
    "sk-dummy",
    "fake-key",
    "placeholder",
];

fn is_documented_placeholder(value: &str) -> bool {
    DOCUMENTED_PLACEHOLDERS.iter().any(|placeholder| value.eq_ignore_ascii_case(placeholder))
}

/// A relative path to a file, as an object's key in a store is
/// (`uploads/2024/file.txt`) or curl's `--key client.pem`: segments of path
/// characters, the last with a short lower-case extension. Base64 has `/`
/// too but no `.`, so `abc/def+ghi==` is not one.
fn is_relative_file(value: &str) -> bool {
    let segments: Vec<&str> = value.split('/').collect();
    let extension = segments.last().and_then(|file| file.rsplit_once('.')).filter(|(stem, _)| !stem.is_empty());
    segments
        .iter()
        .all(|segment| !segment.is_empty() && segment.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)))
        && extension.is_some_and(|(_, extension)| {
            (1..=5).contains(&extension.len())
                && extension.starts_with(|c: char| c.is_ascii_lowercase())
                && extension.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// An absolute or home-relative path (POSIX or Windows) of two or more
/// components, made of the characters paths are made of.
fn is_path(value: &str) -> bool {
    let windows = value.len() > 3
        && value.as_bytes()[0].is_ascii_alphabetic()
        && value.as_bytes()[1] == b':'
        && matches!(value.as_bytes()[2], b'\\' | b'/');
    let rooted = windows || value.starts_with('/') || value.starts_with("~/") || value.starts_with("\\\\");
    let separators = value.chars().filter(|&c| c == '/' || c == '\\').count();
    rooted
        && separators >= 2
        && value.chars().all(|c| c.is_alphanumeric() || "/\\._-~+@:, ()".contains(c))
        && !has(value, "://")
}

/// A GPG fingerprint or key id: 8, 16 or 40 hex digits, optionally `0x`,
/// optionally in groups of four.
fn is_fingerprint(value: &str) -> bool {
    let hex: String = value.trim_start_matches("0x").chars().filter(|c| *c != ' ').collect();
    matches!(hex.len(), 8 | 16 | 40) && hex.chars().all(|c| c.is_ascii_hexdigit())
}

/// A PEM block of a private key (`-----BEGIN … PRIVATE KEY…-----`) or a
/// PuTTY key file (`PuTTY-User-Key-File-3: ssh-ed25519`), which holds the
/// private key whether or not a passphrase encrypts it.
fn has_private_key(value: &str) -> bool {
    const PUTTY: &str = "PuTTY-User-Key-File-";
    occurrences(value, "-----BEGIN ").any(|at| {
        let header = &value[at + 11..];
        let header = &header[..header.find("-----").unwrap_or(header.len())];
        header.contains("PRIVATE KEY")
    }) || value.match_indices(PUTTY).any(|(at, _)| {
        let version = &value[at + PUTTY.len()..];
        let rest = version.trim_start_matches(|c: char| c.is_ascii_digit());
        rest.len() < version.len() && rest.starts_with(':')
    })
}

/// curl's `-u user:password` (or `--user`). The same flag is docker's and
/// sudo's `user:group`, so the part after the colon must look like a
/// password: not a number, not the user again, and mixing letters with
/// digits or holding a symbol (`-u node:node`, `-u 1000:1000` and
/// `-u app:staff` are users and groups).
fn has_user_password(value: &str) -> bool {
    // Most values hold neither flag: they cost one scan, not a word list.
    if !has(value, "-u") {
        return false;
    }
    let words: Vec<&str> = value.split_whitespace().collect();
    words.windows(2).any(|pair| {
        let Some((user, password)) =
            matches!(pair[0], "-u" | "--user").then(|| pair[1].trim_matches(['"', '\'']).split_once(':')).flatten()
        else {
            return false;
        };
        password != user
            && !password.chars().all(|c| c.is_ascii_digit())
            && !is_harmless("", password)
            && (tokens::looks_random(password) || password.chars().any(|c| !c.is_alphanumeric() && !"-_.".contains(c)))
    })
}

/// An option that takes a password on a command line, as its program's
/// manual gives it.
struct PasswordOption {
    /// The programs that take it, by file name.
    programs: &'static [&'static str],
    /// A word that must come after the program first (`docker login`).
    subcommand: Option<&'static str>,
    /// The option (`-p`), case-sensitive: `-P` is often a port.
    flag: &'static str,
    /// Whether the password may be the next word (`sshpass -p secret`), or
    /// only written against the option (`mysql -psecret`: `mysql -p db`
    /// prompts for the password of database `db`).
    spaced: bool,
}

const fn option(programs: &'static [&'static str], flag: &'static str, spaced: bool) -> PasswordOption {
    PasswordOption { programs, subcommand: None, flag, spaced }
}

const MYSQL: &[&str] = &[
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlcheck",
    "mysqlshow",
    "mysqlsh",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
];
const MONGO: &[&str] = &["mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"];
const LDAP: &[&str] =
    &["ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare", "ldapmodrdn"];
const REGISTRY_CLIENTS: &[&str] = &["docker", "podman", "buildah", "skopeo", "nerdctl", "oras", "helm", "crane"];

/// The password options this module knows. A long `--password …` is any
/// program's ([`spaced_options`]); openssl's `pass:…` and smbclient's
/// `-U user%password` are read by [`has_inline_password`] itself.
const PASSWORD_OPTIONS: &[PasswordOption] = &[
    option(MYSQL, "-p", false),
    option(&["sshpass"], "-p", true),
    PasswordOption { programs: REGISTRY_CLIENTS, subcommand: Some("login"), flag: "-p", spaced: true },
    option(&["redis-cli"], "-a", true),
    option(LDAP, "-w", true),
    option(MONGO, "-p", true),
    option(&["sqlcmd", "bcp"], "-P", true),
    option(&["zip", "zipcloak"], "-P", true),
    option(&["7z", "7za", "7zr", "rar", "unrar"], "-p", false),
    option(&["smbclient", "rpcclient", "smbcacls", "smbget"], "-U", true),
    option(&["openssl"], "pass:", false),
];

/// A password given to a command in its options: `mysql -psecret`,
/// `sshpass -p secret`, `docker login -p secret`, `redis-cli -a secret`,
/// `ldapsearch -w secret`, `openssl … -passout pass:secret`, `smbclient -U
/// user%secret`, … ([`PASSWORD_OPTIONS`]). A reference (`-p"$PASSWORD"`), a
/// word of prose (`sshpass -p to …`) or another option is not one.
fn has_inline_password(value: &str) -> bool {
    // Most values run no command with options: they cost one scan.
    if !has(value, " -") {
        return false;
    }
    let words: Vec<&str> = value.split_whitespace().map(|word| word.trim_matches(['"', '\''])).collect();
    let mut current: Option<(&PasswordOption, bool)> = None;
    for (at, word) in words.iter().enumerate() {
        if matches!(*word, ";" | "&&" | "||" | "|" | "&") {
            current = None;
            continue;
        }
        let program = word.rsplit('/').next().unwrap_or(word);
        if let Some(found) = PASSWORD_OPTIONS.iter().find(|option| option.programs.contains(&program)) {
            current = Some((found, found.subcommand.is_none()));
            continue;
        }
        let Some((option, ready)) = current.as_mut() else { continue };
        if !*ready {
            *ready = option.subcommand == Some(*word);
            continue;
        }
        let given = match word.strip_prefix(option.flag) {
            Some("") if option.spaced => words.get(at + 1).copied().filter(|next| !next.starts_with('-')),
            Some(attached) if !attached.is_empty() => Some(attached),
            _ => None,
        };
        let password = given.map(|given| {
            let given = given.trim_matches(['"', '\'']);
            // smbclient's user%password.
            if option.flag == "-U" {
                given.split_once('%').map_or("", |(_, password)| password)
            } else {
                given
            }
        });
        if password
            .is_some_and(|password| !password.is_empty() && !is_harmless("", password) && !is_prose_word(password))
        {
            return true;
        }
    }
    false
}

/// A `scheme://user:password@…` with a non-empty password, or a
/// `scheme://user@…` whose user is a token (`https://ghp_…@github.com`).
fn has_url_credentials(value: &str) -> bool {
    occurrences(value, "://").any(|at| {
        let rest = &value[at + 3..];
        let authority = &rest[..rest.find(['/', '?', '#', ' ', '\t', '\n', '"', '\'']).unwrap_or(rest.len())];
        let Some(end) = authority.rfind('@') else { return false };
        match authority[..end].split_once(':') {
            Some((_, password)) => !password.is_empty(),
            None => {
                let user = &authority[..end];
                let token = tokens::is_token(user) || (user.len() >= 20 && tokens::looks_random(user));
                token && !is_sentry_dsn(user, &rest[authority.len()..])
            }
        }
    })
}

/// Whether a URL in `value` has its secret in its path: a webhook of
/// [`WEBHOOKS`] with something after it, or on any host (a self-hosted
/// Mattermost or Rocket.Chat) a `hooks` segment followed by a random one, or
/// a `key` or `token` segment followed by a random one that is not a UUID
/// (which is an id).
fn has_secret_path(value: &str) -> bool {
    occurrences(value, "://").any(|at| {
        let rest = &value[at + 3..];
        let url = &rest[..rest.find([' ', '\t', '\n', '"', '\'']).unwrap_or(rest.len())];
        let known = WEBHOOKS.iter().any(|hook| {
            occurrences(url, hook).any(|at| url[at + hook.len()..].starts_with(|c: char| c.is_ascii_alphanumeric()))
        });
        let path = url.split_once('/').map_or("", |(_, path)| path);
        let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
        let segments: Vec<&str> = path.split('/').collect();
        known
            || segments.windows(2).any(|pair| {
                let named = pair[0].to_ascii_lowercase();
                let random = pair[1].len() >= 16
                    && pair[1].chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
                    && tokens::looks_random(pair[1]);
                random
                    && (named.ends_with("hook")
                        || named.ends_with("hooks")
                        || (matches!(named.as_str(), "key" | "token") && !is_uuid(pair[1])))
            })
    })
}

/// A UUID: 8-4-4-4-12 hex digits.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.iter().map(|group| group.len()).eq([8, 4, 4, 4, 12])
        && text.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}

/// `value` with the password of every `scheme://user:password@…` in it
/// replaced by `with`; `None` when it has none.
pub(super) fn replace_url_passwords(value: &str, with: &str) -> Option<String> {
    let mut shown = String::with_capacity(value.len());
    let mut rest = value;
    let mut hidden = false;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        shown.push_str(before);
        let authority = &after[..after.find(['/', '?', '#', ' ', '\t', '\n', '"', '\'']).unwrap_or(after.len())];
        let password = authority.rfind('@').and_then(|end| {
            let colon = authority[..end].find(':')?;
            (colon + 1 < end).then_some((colon + 1, end))
        });
        match password {
            Some((start, end)) => {
                shown.push_str(&authority[..start]);
                shown.push_str(with);
                shown.push_str(&authority[end..]);
                hidden = true;
            }
            None => shown.push_str(authority),
        }
        rest = &after[authority.len()..];
    }
    shown.push_str(rest);
    hidden.then_some(shown)
}

/// A Sentry DSN in its current form, `https://<public key>@<host>/<project>`:
/// the key is 32 hex digits and public by design (browsers are given it).
/// Its legacy form also had a secret key, after a colon: a password.
fn is_sentry_dsn(user: &str, path: &str) -> bool {
    let project = path.trim_start_matches('/');
    user.len() == 32
        && user.chars().all(|c| c.is_ascii_hexdigit())
        && !project.is_empty()
        && project.chars().take_while(|c| !c.is_whitespace()).all(|c| c.is_ascii_digit())
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '~')
}

fn is_base64_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-')
}

/// The maximal runs of `allowed` characters in `value`.
fn words(value: &str, allowed: fn(char) -> bool) -> impl Iterator<Item = &str> {
    value.split(move |c: char| !allowed(c)).filter(|word| !word.is_empty())
}

/// Every `key`/`value` pair written inside `value`: `key=value` (separated
/// by `;`, `&`, `?`, `,`, new lines or spaces), `--key value` in options,
/// `key: value` on a line, JSON's `"key": "value"`, XML's
/// `<key>value</key>` (Maven's `settings.xml`), netrc's `password value`,
/// a `.pgpass` line's password, and a name/value pair's name and value
/// (`{"name": "DB_PASSWORD", "value": "…"}`, Kubernetes' `env` lists).
fn pairs(value: &str, present: Present) -> impl Iterator<Item = (&str, &str)> {
    // A notation whose marks the value lacks is given nothing to read.
    let with = |marks: &str| if present.all(marks) { value } else { "" };
    assignments(with("="))
        .chain(spaced_options(with("-")))
        .chain(colon_lines(with(": ")))
        .chain(json_strings(with("\":")))
        .chain(xml_elements(with("</>")))
        .chain(netrc_passwords(with("password")))
        .chain(pgpass_passwords(with(":")))
        .chain(named_values(with("namevalue")))
}

/// Words that follow an option's name in prose about it rather than in a
/// command (`the --token option`, `Add --api-key flag`, `--secret is
/// deprecated`): what the option is called and the words that join a
/// sentence. Compared ignoring case and trailing punctuation.
const PROSE_WORDS: &[&str] = &[
    "option",
    "options",
    "flag",
    "flags",
    "argument",
    "arguments",
    "arg",
    "args",
    "parameter",
    "parameters",
    "param",
    "params",
    "switch",
    "setting",
    "settings",
    "value",
    "values",
    "support",
    "usage",
    "and",
    "or",
    "nor",
    "is",
    "are",
    "was",
    "were",
    "be",
    "has",
    "have",
    "had",
    "to",
    "for",
    "with",
    "without",
    "in",
    "on",
    "of",
    "the",
    "a",
    "an",
    "as",
    "by",
    "from",
    "into",
    "if",
    "when",
    "that",
    "which",
    "it",
    "instead",
    "now",
    "only",
    "also",
    "will",
    "can",
    "must",
    "should",
    "may",
    "not",
];

/// Whether `word` is one of [`PROSE_WORDS`]: what a sentence about an option
/// puts after its name, where a command puts its value.
fn is_prose_word(word: &str) -> bool {
    let word = word.trim_end_matches(|c: char| c.is_ascii_punctuation());
    PROSE_WORDS.iter().any(|prose| word.eq_ignore_ascii_case(prose))
}

/// Words that begin the long options that take no value, whose next word is
/// an argument of the command instead (`--no-password appdb`,
/// `--ask-vault-pass site.yml`, `gh auth login --with-token`).
const SWITCH_OPTIONS: &[&str] = &["no", "ask", "prompt", "with", "use", "skip", "show", "print", "generate", "rotate"];

/// `--password value`: a long option and the word after it. Left out: a
/// switch ([`SWITCH_OPTIONS`]); a plain `--key` or `--default-key`, which
/// name a file or a GPG key (`--api-key` stays); and a word that is another
/// option, a file (`--client-key client.pem`), a specification whose own
/// `key=value` pairs are judged (docker's `--secret id=npm,src=…`) or prose
/// about the option ([`PROSE_WORDS`]: `explain the --token option`).
fn spaced_options(value: &str) -> impl Iterator<Item = (&str, &str)> {
    // Most values hold no long option: they cost one scan, not a word list.
    let words: Vec<&str> = if has(value, "--") { value.split_whitespace().collect() } else { Vec::new() };
    let pairs: Vec<(&str, &str)> = words
        .windows(2)
        .filter_map(|pair| {
            let option = pair[0].strip_prefix("--")?;
            let first = option.split(['-', '_']).next().unwrap_or_default().to_ascii_lowercase();
            let takes_value = !option.is_empty() && !option.contains('=') && !SWITCH_OPTIONS.contains(&first.as_str());
            let argument = !pair[1].starts_with('-')
                && !pair[1].contains('=')
                && !is_relative_file(pair[1])
                && !is_prose_word(pair[1]);
            (takes_value && argument && !names::names_plain_key(option)).then_some((option, pair[1]))
        })
        .collect();
    pairs.into_iter()
}

/// `key=value`: the key is the word before `=`, the value runs to the next
/// separator.
fn assignments(value: &str) -> impl Iterator<Item = (&str, &str)> {
    let separator = |c: char| matches!(c, ';' | '&' | '?' | ',' | '\n' | '\r');
    value.split(separator).flat_map(|piece| {
        piece.match_indices('=').filter_map(move |(at, _)| {
            let key = piece[..at].trim_end();
            let key = &key[key.rfind(char::is_whitespace).map_or(0, |space| space + 1)..];
            let key = key.trim_start_matches(['-', '"', '\'']);
            let inner = piece[at + 1..].trim_start();
            let inner = &inner[..inner.find(char::is_whitespace).unwrap_or(inner.len())];
            (!key.is_empty() && !key.contains('=')).then_some((key, inner))
        })
    })
}

/// `key: value` on a line (YAML, HTTP headers); the key is one word.
fn colon_lines(value: &str) -> impl Iterator<Item = (&str, &str)> {
    value.lines().filter_map(|line| {
        let (key, inner) = line.split_once(": ")?;
        let key = key.trim().trim_start_matches("- ").trim_matches(['"', '\'']);
        (!key.is_empty() && !key.contains(char::is_whitespace)).then_some((key, inner.trim()))
    })
}

/// XML's `<key>value</key>` with text only inside (`<password>…</password>`
/// in Maven's `settings.xml`, `<gpg.passphrase>` in a profile).
fn xml_elements(value: &str) -> impl Iterator<Item = (&str, &str)> {
    // Most values hold no closing tag: they cost one scan.
    let given = if has(value, "</") { value } else { "" };
    given.match_indices('<').filter_map(move |(at, _)| {
        let rest = &given[at + 1..];
        let (tag, rest) = rest.split_once('>')?;
        let valid = !tag.is_empty() && tag.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | ':'));
        let (inner, rest) = rest.split_once('<')?;
        let closed =
            rest.strip_prefix('/').and_then(|rest| rest.strip_prefix(tag)).is_some_and(|rest| rest.starts_with('>'));
        (valid && closed).then_some((tag, inner.trim()))
    })
}

/// netrc's `machine <host> … password <value>` (and `account <value>`), in
/// lines or on one; `default login …` entries too. A `machine` must be
/// followed by a host and a password by no word of prose, so prose
/// (`machine translation; password reset`, `the default password is …`) is
/// not netrc.
fn netrc_passwords(value: &str) -> impl Iterator<Item = (&str, &str)> {
    // Most values are no netrc: they cost two scans, not a word list.
    let netrc = has(value, "password") && (has(value, "machine") || has(value, "default"));
    let words: Vec<&str> = if netrc { value.split_whitespace().collect() } else { Vec::new() };
    let mut entry = false;
    let mut found = Vec::new();
    for (at, word) in words.iter().enumerate() {
        match *word {
            "machine" => entry = words.get(at + 1).is_some_and(|host| is_host(host)),
            "default" => entry = words.get(at + 1) == Some(&"login"),
            "password" | "account" if entry => {
                found.extend(words.get(at + 1).filter(|next| !is_prose_word(next)).map(|next| (*word, *next)));
            }
            _ => {}
        }
    }
    found.into_iter()
}

/// A host name or address as netrc names one: `localhost`, or dotted labels.
fn is_host(word: &str) -> bool {
    (word == "localhost" || word.contains('.'))
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
}

/// The password of each `.pgpass` line, `host:port:database:user:password`
/// (a port or `*` second; five fields, so `PATH` lists are not one).
fn pgpass_passwords(value: &str) -> impl Iterator<Item = (&str, &str)> {
    let given = if value.contains(':') { value } else { "" };
    given.lines().filter_map(|line| {
        let fields: Vec<&str> = line.trim().split(':').collect();
        let port = fields
            .get(1)
            .is_some_and(|port| *port == "*" || (!port.is_empty() && port.chars().all(|c| c.is_ascii_digit())));
        let host =
            fields[0] == "*" || is_host(fields[0]) || fields[0].chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        (fields.len() == 5 && port && host && !fields[0].is_empty() && !fields[4].is_empty())
            .then(|| ("password", fields[4]))
    })
}

/// A name/value pair's name and value, in JSON (`{"name": "DB_PASSWORD",
/// "value": "…"}`) or on YAML lines (`- name: API_TOKEN` then `value: …`),
/// as Kubernetes, ECS and CI systems list variables.
fn named_values(value: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut found = Vec::new();
    if has(value, "name") && has(value, "value") {
        for keyed in [json_strings(value).collect::<Vec<_>>(), colon_lines(value).collect()] {
            let mut name = None;
            for (key, inner) in keyed {
                if key.eq_ignore_ascii_case("name") {
                    name = Some(inner);
                } else if key.eq_ignore_ascii_case("value") {
                    found.extend(name.take().map(|name| (name, inner)));
                }
            }
        }
    }
    found.into_iter()
}

/// Whether `value` is a jar of cookies, each a session's key: a browser's
/// or a test runner's export (JSON or YAML with a `domain` and cookie
/// attributes such as `httpOnly` or `expires`, holding a `value`) or a
/// Netscape cookie file (curl's, wget's: tab-separated, `TRUE`/`FALSE`
/// flags, an expiry, a name and a value).
fn has_cookie_jar(value: &str) -> bool {
    const ATTRIBUTES: &[&str] = &["httpOnly", "HttpOnly", "sameSite", "expirationDate", "hostOnly", "expires"];
    let serialized = has(value, "domain")
        && has(value, "value")
        && ATTRIBUTES.iter().any(|attribute| has(value, attribute))
        && json_strings(value).chain(colon_lines(value)).any(|(key, inner)| {
            let inner = inner.trim_matches(['"', '\'']);
            key == "value" && inner.len() >= 8 && !is_harmless("", inner)
        });
    serialized
        || (value.contains('\t')
            && value.lines().any(|line| {
                let fields: Vec<&str> = line.trim_start_matches("#HttpOnly_").split('\t').collect();
                let flag = |at: usize| matches!(fields[at], "TRUE" | "FALSE");
                fields.len() == 7
                    && flag(1)
                    && flag(3)
                    && fields[4].chars().all(|c| c.is_ascii_digit())
                    && fields[6].len() >= 8
                    && !is_harmless("", fields[6])
            }))
}

/// JSON's `"key": "value"`: two string literals with only a colon between.
fn json_strings(value: &str) -> impl Iterator<Item = (&str, &str)> {
    let literals = string_literals(value);
    let pairs: Vec<(&str, &str)> = literals
        .windows(2)
        .filter(|pair| value[pair[0].1..pair[1].0 - 1].trim() == ":")
        .map(|pair| (&value[pair[0].0..pair[0].1 - 1], &value[pair[1].0..pair[1].1 - 1]))
        .collect();
    pairs.into_iter()
}

/// The `"…"` literals of `value`, each as the range from after its opening
/// quote to after its closing quote.
fn string_literals(value: &str) -> Vec<(usize, usize)> {
    let mut literals = Vec::new();
    let mut chars = value.char_indices();
    while let Some((open, c)) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut escaped = false;
        for (at, c) in chars.by_ref() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    literals.push((open + 1, at + 1));
                    break;
                }
                _ => escaped = false,
            }
        }
    }
    literals
}

/// Whether base64 `word` decodes to text that carries a credential.
fn decodes_to_secret(word: &str, depth: u8) -> bool {
    if word.len() < MIN_BLOB {
        return false;
    }
    let config = GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let engine = if word.contains(['-', '_']) {
        GeneralPurpose::new(&alphabet::URL_SAFE, config)
    } else {
        GeneralPurpose::new(&alphabet::STANDARD, config)
    };
    let Ok(bytes) = engine.decode(word) else { return false };
    let Ok(text) = String::from_utf8(bytes) else { return false };
    let printable = text.chars().filter(|c| !c.is_control() || c.is_whitespace()).count();
    printable * 10 >= text.chars().count() * 9 && carries(&text, depth + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_with_a_password_or_a_token_user_carry_a_credential() {
        for value in [
            "postgres://app:s3cret@db.internal:5432/app",
            "mongodb+srv://user:pw@cluster0.example.net/?retryWrites=true",
            "proxy=http://me:hunter2@proxy:3128",
            "https://x-access-token:ghs_0123456789abcdefghijABCDEFGHIJklmnop@github.com/o/r.git",
            "https://aB3dE5gH7jK9mN1pQ3sT5vW7@pkgs.example.com/simple/",
            "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX",
        ] {
            assert!(carries_secret(value), "{value}");
        }
        for value in ["https://example.com/a:b@c", "https://user@example.com/", "ssh://git@host:22/repo", "a:b@c"] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn a_webhook_or_a_random_segment_after_hooks_key_or_token_is_a_secret_path() {
        for value in [
            "https://open.feishu.cn/open-apis/bot/v2/hook/3f2a9c1e-7b4d-4e8a-9c2f-1a6b5d3e8f70",
            "https://hooks.zapier.com/hooks/catch/1234567/3xk9p2q/",
            "https://chat.acme.io/hooks/8qk3x9m2p7ryb4nf5tzc6wdh1e",
            "https://maker.ifttt.com/trigger/done/with/key/dK3x9Q2mP7rYb4Nf5Tz6Wd",
            "notify=https://api.netlify.com/build_hooks/65a1f3c2b9e4d7a8f1c0b2e3 retries=2",
        ] {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            "https://hooks.zapier.com/",
            "https://ci.acme.io/hooks/gitlab",
            "https://api.github.com/repos/acme/app/hooks/12345678",
            "https://docs.mattermost.com/developer/webhooks-incoming.html",
            "https://kms.acme.io/v1/key/3f2a9c1e-7b4d-4e8a-9c2f-1a6b5d3e8f70",
            "/hooks/8qk3x9m2p7ryb4nf5tzc6wdh1e",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn an_auth_scheme_with_credentials_carries_them_wherever_it_is_written() {
        for value in [
            r#"-sS -H "Authorization: Bearer Zq8Lw3Xv9Tp2Nc7Rb4HmYc1" https://api.acme.io"#,
            r#"{"Helicone-Auth": "Bearer sk-helicone-7xq2abc-9k3m2p1"}"#,
            "Authorization=Bearer%20Zq8Lw3Xv9Tp2Nc7Rb4HmYc1",
            "proxy: Basic ZGVwbG95LWJvdDpuOGFRTVUybTBUZHdaVzE4",
        ] {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            "Send the Authorization: Bearer header from the proxy",
            "Bearer ${API_TOKEN}",
            "Basic usage examples",
            "the scheme is Bearer",
            "Basic aGVsbG8gd29ybGQ=",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn a_header_in_options_or_a_header_list_carries_a_key_whatever_the_header_is_called() {
        assert!(carries_secret("--header 'X-Honeycomb-Team: Kq3bT9xWc2LmN8pRz4YvHd' --max-time 5"));
        assert!(carries_secret(r#"--header="X-Api-Key: abc12345" --tries=2"#));
        assert!(!carries_secret(r#"-H "Accept: application/json" -H "X-Request-Source: nightly-build""#));
        assert!(!carries_secret("grep -H pattern:value file.txt"));
        assert!(has_secret_header("x-honeycomb-team=Kq3bT9xWc2LmN8pRz4YvHd,x-honeycomb-dataset=checkout"));
        assert!(has_secret_header("X-Ingest-Ref: 0123456789abcdef0123456789abcdef"));
        for value in [
            "X-Scope-OrgID=acme-prod",
            "X-Scope-OrgID=3f2a9c1e-7b4d-4e8a-9c2f-1a6b5d3e8f70",
            "x-otlp-version=1.4.2,dataset=checkout-service",
            "User-Agent: acme-cli/4.2.1",
        ] {
            assert!(!has_secret_header(value), "{value}");
        }
    }

    #[test]
    fn configuration_files_in_one_value_carry_their_passwords() {
        for value in [
            "<settings><servers><server><id>nexus</id><password>Zq8Lw3Xv9Tp2</password></server></servers></settings>",
            "<properties><gpg.passphrase>Zq8Lw3Xv9Tp2</gpg.passphrase></properties>",
            "machine api.heroku.com\n  login me@acme.io\n  password 3f2a9c1e-7b4d-4e8a-9c2f-1a6b5d3e8f70\n",
            "machine nexus.acme.io login deploy password Zq8Lw3Xv9Tp2",
            "default login anonymous password guest@acme.io",
            "default login ci password Zq8Lw3Xv9Tp2",
            "db.acme.io:5432:app:app:Zq8Lw3Xv9Tp2\n*:*:*:reporter:hunter2\n",
        ] {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            "<server><id>nexus</id><password>${env.NEXUS_PASSWORD}</password></server>",
            "<server><privateKey>${user.home}/.ssh/id_ed25519</privateKey></server>",
            "<mirror><url>https://nexus.acme.io/maven/</url><mirrorOf>*</mirrorOf></mirror>",
            "machine github.com login ci-bot",
            "Add machine translation; password reset emails are now localized",
            "The default password is set by the installer",
            "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "db.acme.io:5432:app",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn name_value_pairs_are_judged_by_the_name_they_give() {
        assert!(carries_secret(r#"[{"name": "DB_PASSWORD", "value": "Zq8Lw3Xv9Tp2"}]"#));
        assert!(carries_secret("- name: LOG_LEVEL\n  value: info\n- name: API_TOKEN\n  value: Zq8Lw3Xv9Tp2\n"));
        assert!(!carries_secret("- name: API_TOKEN\n  valueFrom:\n    secretKeyRef: {name: api, key: token}\n"));
        assert!(!carries_secret(r#"[{"name": "rollout", "value": "25%"}]"#));
    }

    #[test]
    fn a_cookie_jar_carries_sessions_and_cookie_settings_or_dns_records_do_not() {
        for value in [
            "- name: sessionid\n  value: 8f2kq9x3m7p1z5c0v4b6n2q8w1e3r5t7\n  domain: app.acme.io\n  httpOnly: true\n",
            r#"[{"domain": ".acme.io", "httpOnly": true, "name": "connect.sid", "value": "s%3AZq8Lw3Xv9Tp2Nc7Rb4Hm"}]"#,
            "# Netscape HTTP Cookie File\n.acme.io\tTRUE\t/\tTRUE\t1767225600\t_session_id\t0123456789abcdef\n",
            "#HttpOnly_.acme.io\tTRUE\t/\tTRUE\t0\tsid\tZq8Lw3Xv9Tp2Nc7R\n",
        ] {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            r#"[{"name": "www", "value": "203.0.113.7", "domain": "acme.io", "type": "A", "ttl": 300}]"#,
            r#"{"name": "cc_cookie", "domain": "acme.io", "expiresAfterDays": 182, "sameSite": "Lax"}"#,
            ".acme.io\tTRUE\t/\tTRUE\t1767225600\tconsent\tyes\n",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn url_passwords_are_replaced_wherever_they_are_and_nothing_else_is() {
        let hide = |value| replace_url_passwords(value, "****");
        assert_eq!(hide("postgres://app:s3cret@db:5432/app").as_deref(), Some("postgres://app:****@db:5432/app"));
        assert_eq!(
            hide("a=http://me:pw@proxy:3128 b=https://u:p:q@h/x").as_deref(),
            Some("a=http://me:****@proxy:3128 b=https://u:****@h/x")
        );
        assert_eq!(
            replace_url_passwords("postgres://app:s3cret@db/app", "").as_deref(),
            Some("postgres://app:@db/app")
        );
        for value in
            ["https://user@example.com/", "ssh://git@host:22/repo", "https://example.com/a:b@c", "plain", "x://:@h"]
        {
            assert_eq!(hide(value), None, "{value}");
        }
    }

    #[test]
    fn keys_that_name_a_credential_carry_one_in_any_notation() {
        for value in [
            "Server=db;Database=app;User Id=app;Password=Pa55word!;",
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=bXlrZXk=;EndpointSuffix=core.windows.net",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2VjcmV0",
            "jdbc:postgresql://db:5432/app?user=app&password=hunter2",
            "-Xmx2g -Ddb.password=hunter2 -Dfile.encoding=UTF-8",
            "--token=abc123def",
            r#"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE"}"#,
            r#"{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}"#,
            "Authorization: Bearer abc.def.ghi",
            "users:\n- name: ci\n  user:\n    token: 0123456789abcdef",
        ] {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            "--max-old-space-size=8192",
            "-Dfile.encoding=UTF-8",
            "--jobserver-auth=3,4",
            "rs=0:di=01;34:ln=01;36",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root",
            "-Ddb.password=${DB_PASSWORD}",
            r#"{"client_email": "ci@project.iam.gserviceaccount.com"}"#,
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn private_keys_and_encoded_credentials_carry_one() {
        assert!(carries_secret("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"));
        assert!(carries_secret("-----BEGIN EC PRIVATE KEY-----"));
        assert!(!carries_secret("-----BEGIN CERTIFICATE-----\nMIIB"));
        // base64 of a kubeconfig fragment holding a token.
        assert!(carries_secret("dXNlcnM6Ci0gbmFtZTogY2kKICB1c2VyOgogICAgdG9rZW46IDAxMjM0NTY3ODlhYmNkZWY="));
        // base64 of harmless text.
        assert!(!carries_secret("aGVsbG8gd29ybGQsIHRoaXMgaXMgbm90IGEgc2VjcmV0"));
    }

    #[test]
    fn base64_in_lines_is_decoded_whole_so_a_key_cut_by_a_line_break_is_found() {
        use base64::engine::general_purpose::STANDARD;
        // 57 bytes a line: the first ends with `DB_P`.
        let dotenv = format!("APP_ENV=production\n# {}\nDB_PASSWORD=Zq8Lw3Xv9Tp2\n", "-".repeat(31));
        let encoded = STANDARD.encode(dotenv);
        let lines: Vec<&str> = encoded.as_bytes().chunks(76).map(|line| std::str::from_utf8(line).unwrap()).collect();
        // Each line alone holds half of the key.
        assert!(lines.iter().all(|line| !carries_secret(line)), "{lines:?}");
        assert!(carries_secret(&lines.join("\n")));
        assert!(carries_secret(&(lines.join("\r\n") + "\r\n")));
        let prose = STANDARD.encode("Rotate the database password every 90 days; the token service is documented.");
        let prose: Vec<&str> = prose.as_bytes().chunks(64).map(|line| std::str::from_utf8(line).unwrap()).collect();
        assert!(!carries_secret(&prose.join("\n")));
    }

    #[test]
    fn a_putty_key_file_is_a_private_key() {
        assert!(carries_secret("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAAIA"));
        assert!(carries_secret("PuTTY-User-Key-File-2: ssh-rsa\nEncryption: aes256-cbc"));
        assert!(!carries_secret("see PuTTY-User-Key-File-format.txt"));
    }

    #[test]
    fn curl_s_user_and_password_in_options_carry_a_credential_and_users_with_groups_do_not() {
        for value in ["-u admin:Zq8Lw3Xv9Tp2 https://x", "--silent --user 'ci:p@ss!' https://x"] {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            "-u 1000:1000 -v /a:/b",
            "-u node:node --rm",
            "-u app:staff",
            "-u admin:$PASS https://x",
            "-u admin: https://x",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn a_command_s_password_option_carries_its_password_and_the_same_letter_elsewhere_does_not() {
        for value in [
            "mysql -h db -u app -pZq8Lw3Xv9 appdb",
            "/usr/bin/mysqldump -uroot -p'S3cr3t!' shop",
            "sshpass -p 'Tr0ub4dor&3' ssh deploy@web-01",
            "docker --config /tmp/c login -u ci -p Zq8Lw3Xv9Tp2 registry.acme.io",
            "redis-cli -h cache -a Zq8Lw3Xv9Tp2 ping",
            "ldapsearch -x -D cn=admin,dc=acme -w Adm1nPa55 -b dc=acme",
            "openssl pkcs12 -export -in cert.pem -passout pass:Zq8Lw3Xv9",
            "zip -P Zq8Lw3Xv9 backup.zip dump.sql",
            "7z a -pS3cr3tArch1ve backup.7z data/",
            "smbclient //nas/share -U backup%Zq8Lw3Xv9",
        ] {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            "mysql -h db -u app -p appdb",
            "mysql -h db -P 3306 -u app",
            "ssh -p 2222 deploy@web-01",
            "docker run -p 8080:80 nginx",
            "mysql -uroot -p\"$MYSQL_ROOT_PASSWORD\" shop",
            "redis-cli -h cache -p 6379 ping",
            "mkdir -p /var/run/app && zip -r backup.zip data/",
            "openssl pkcs12 -export -passout env:P12_PASSWORD",
            "sshpass -e ssh deploy@web-01",
            "Use sshpass -p to pass the password",
            "smbclient //nas/share -U backup",
            "echo done; 7z a -p",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn a_long_option_naming_a_credential_carries_the_word_after_it_unless_it_takes_none() {
        for value in
            ["--password Zq8Lw3Xv9Tp2", "--verbose --api-key Zq8Lw3Xv9Tp2 --retry 3", "--client-secret 'Zq8Lw3'"]
        {
            assert!(carries_secret(value), "{value}");
        }
        for value in [
            "--password-stdin",
            "--password --verbose",
            "--password ${DB_PASSWORD}",
            "--password-file /run/secrets/db",
            "--no-password appdb",
            "--ask-vault-pass site.yml",
            "--with-token --hostname github.com",
            "--cert client.pem --client-key client-key.pem",
            "--key Zq8Lw3Xv9Tp2",
            "--default-key ABCDEF12",
            "--secret id=npmrc,src=/home/me/.npmrc",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
    }

    #[test]
    fn prose_about_an_option_carries_no_credential_and_a_value_that_starts_like_a_word_does() {
        for value in [
            "docs: explain the --token option",
            "Add --api-key flag to the deploy CLI.",
            "The --password option is now read from a file, and --secret is deprecated.",
            "--client-secret parameter removed, use --token instead",
        ] {
            assert!(!carries_secret(value), "{value}");
        }
        for value in ["--api-key flagstaff2024x", "--token Optional9x", "--password isolation"] {
            assert!(carries_secret(value), "{value}");
        }
    }

    #[test]
    fn local_model_servers_placeholder_keys_are_harmless_but_not_as_passwords() {
        for value in ["EMPTY", "sk-no-key-required", "ollama", "lm-studio", "not-needed", "Dummy"] {
            assert!(is_harmless("OPENAI_API_KEY", value), "{value}");
        }
        assert!(!is_harmless("MYSQL_ROOT_PASSWORD", "dummy"));
        assert!(!is_harmless("OPENAI_API_KEY", "ollama-8f3a9c2e7b1d"));
    }

    #[test]
    fn four_or_more_xs_and_separators_are_a_placeholder_and_a_lone_x_is_not() {
        for value in ["XXXXX-XXXXX-XXXXX-XXXXX", "xxxx", "XXXX_XXXX"] {
            assert!(is_harmless("NODE_AUTH_TOKEN", value), "{value}");
        }
        for value in ["x", "XXXXX-XXXXX-XXXXX-XXXXY", "Xq8Lw3Xv9Tp2Nc7Rb4HmXx"] {
            assert!(!is_harmless("NODE_AUTH_TOKEN", value), "{value}");
        }
    }

    #[test]
    fn pass_s_key_ids_are_fingerprints_and_hex_under_other_key_names_is_a_secret() {
        let fingerprint = "A035C8C19219BA821ECEA86B64E628F8D684696D";
        assert!(is_harmless("PASSWORD_STORE_KEY", fingerprint));
        assert!(is_harmless("PASSWORD_STORE_KEY", "A035C8C19219BA821ECEA86B64E628F8D684696D 9CCD3D050C8BE7CF"));
        assert!(is_harmless("PASSWORD_STORE_SIGNING_KEY", fingerprint));
        assert!(!is_harmless("PASSWORD_STORE_KEY", "Zq8Lw3Xv9Tp2Nc7Rb4Hm"));
        assert!(!is_harmless("JWT_SIGNING_KEY", fingerprint));
    }

    #[test]
    fn a_relative_file_path_under_a_plain_key_is_an_object_key_and_base64_is_not() {
        for value in ["uploads/2024/file.txt", "backups/db-2024-06-01.sql.gz", "a/b.json"] {
            assert!(is_harmless("S3_KEY", value), "{value}");
        }
        for value in [
            "abc/def+ghi==",
            "Xq8Lw3/Xv9Tp2Nc7Rb4Hm/AbCdEf",
            "uploads/file",
            "file.txt",
            "uploads/file.TXT",
            "a//b.txt",
        ] {
            assert!(!is_harmless("S3_KEY", value), "{value}");
        }
        assert!(!is_harmless("S3_SECRET_KEY", "uploads/2024/file.txt"));
        assert!(!is_harmless("DB_PASSWORD", "uploads/2024/file.txt"));
    }

    #[test]
    fn a_number_under_a_seed_or_a_plural_and_what_is_not_a_pin_under_a_pin_are_harmless() {
        for (name, value) in [
            ("RANDOM_SEED", "42"),
            ("TORCH_SEED", "-1"),
            ("HASH_SEED", "random"),
            ("MAX_API_KEYS", "16"),
            ("BUTTON_PIN", "13"),
            ("SIM_PIN", "1.2"),
            ("REDIS_KEYS", "session:*,cache:*"),
        ] {
            assert!(is_harmless(name, value), "{name}={value}");
        }
        for (name, value) in [
            ("WALLET_SEED", "abandon ability able about"),
            ("TOTP_SEED", "JBSWY3DPEHPK3PXP"),
            ("SIM_PIN", "4821"),
            ("PKCS11_PIN", "Hsm4Pin2024"),
            ("APP_PREVIOUS_KEYS", "base64:Zq8Lw3Xv9Tp2Nc7Rb4Hm"),
            ("DB_PASSWORD", "123456"),
        ] {
            assert!(!is_harmless(name, value), "{name}={value}");
        }
    }

    #[test]
    fn switches_references_paths_and_fingerprints_are_harmless() {
        for value in ["", "yes", "FALSE", "${SECRET}", "%API_KEY%", "****", "/run/secrets/db", "~/.aws/credentials"] {
            assert!(is_harmless("DB_PASSWORD", value), "{value}");
        }
        assert!(is_harmless("GPG_KEY", "A035C8C19219BA821ECEA86B64E628F8D684696D"));
        assert!(!is_harmless("API_KEY", "A035C8C19219BA821ECEA86B64E628F8D684696D"));
        assert!(!is_harmless("DB_PASSWORD", "hunter2"));
        assert!(!is_harmless("DB_PASSWORD", "/hunter2"));
        assert!(!is_harmless("DB_URL_PASSWORD", "https://a/b/c"));
    }
}
