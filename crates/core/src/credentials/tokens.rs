//! Providers' token shapes, in their full form: a prefix and then a random
//! part of the provider's length and alphabet, so `sk-fix-login-redirect-loop`
//! (a branch name) is not an OpenAI key and `npm_install` is not an npm token.
//! Taken from the providers' documentation and the published rule sets of
//! secret scanners (gitleaks, GitHub secret scanning).

use std::sync::OnceLock;

/// The characters a token's random part may use.
#[derive(Clone, Copy)]
enum Alphabet {
    /// `A-Z a-z 0-9`.
    Alnum,
    /// Letters, digits and `_`.
    Word,
    /// Letters, digits, `_` and `-` (base64url).
    Dashed,
    /// Letters, digits, `_`, `-` and `.`.
    Dotted,
    /// `0-9 a-f`.
    Hex,
    /// Upper-case letters and digits.
    Upper,
    /// Letters, digits, `+`, `/` and `=` (base64).
    Base64,
}

impl Alphabet {
    fn allows(self, c: char) -> bool {
        match self {
            Self::Alnum => c.is_ascii_alphanumeric(),
            Self::Word => c.is_ascii_alphanumeric() || c == '_',
            Self::Dashed => c.is_ascii_alphanumeric() || c == '_' || c == '-',
            Self::Dotted => c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'),
            Self::Hex => c.is_ascii_digit() || ('a'..='f').contains(&c),
            Self::Upper => c.is_ascii_uppercase() || c.is_ascii_digit(),
            Self::Base64 => c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='),
        }
    }
}

/// A provider's token: `prefix`, then at least `min` characters of `alphabet`.
struct Shape {
    prefix: &'static str,
    min: usize,
    alphabet: Alphabet,
}

const fn shape(prefix: &'static str, min: usize, alphabet: Alphabet) -> Shape {
    Shape { prefix, min, alphabet }
}

use Alphabet::{Alnum, Base64, Dashed, Dotted, Hex, Upper, Word};

/// The prefixed shapes. Keys whose only mark is `sk-` are [`is_sk_key`].
const SHAPES: &[Shape] = &[
    // GitHub: personal, OAuth, user-to-server, server-to-server, refresh; fine-grained.
    shape("ghp_", 36, Alnum),
    shape("gho_", 36, Alnum),
    shape("ghu_", 36, Alnum),
    shape("ghs_", 36, Alnum),
    shape("ghr_", 36, Alnum),
    shape("github_pat_", 70, Word),
    // GitLab: personal, runner, deploy, pipeline trigger, CI build, feed, OAuth
    // app secret, agent; the legacy runner registration token.
    shape("glpat-", 20, Dashed),
    shape("glrt-", 20, Dashed),
    shape("gldt-", 20, Dashed),
    shape("glptt-", 20, Dashed),
    shape("glcbt-", 20, Dashed),
    shape("glft-", 20, Dashed),
    shape("gloas-", 20, Dashed),
    shape("glagent-", 20, Dashed),
    shape("GR1348941", 20, Dashed),
    // Slack: bot, user, app-level, refresh, configuration tokens.
    shape("xoxb-", 10, Dashed),
    shape("xoxp-", 10, Dashed),
    shape("xoxa-", 10, Dashed),
    shape("xoxr-", 10, Dashed),
    shape("xoxs-", 10, Dashed),
    shape("xoxe-", 10, Dashed),
    shape("xoxe.xoxp-", 10, Dashed),
    shape("xapp-", 20, Dashed),
    // Stripe: secret and restricted keys, webhook signing secrets.
    shape("sk_live_", 24, Alnum),
    shape("sk_test_", 24, Alnum),
    shape("rk_live_", 24, Alnum),
    shape("rk_test_", 24, Alnum),
    shape("whsec_", 32, Alnum),
    // AI providers: Groq, Hugging Face (user and organisation), Perplexity,
    // xAI, Replicate, Fireworks.
    shape("gsk_", 40, Alnum),
    shape("hf_", 30, Alnum),
    shape("api_org_", 30, Alnum),
    shape("pplx-", 40, Alnum),
    shape("xai-", 60, Alnum),
    shape("r8_", 30, Alnum),
    shape("fw_", 20, Alnum),
    // Mapbox: secret and temporary tokens (its public tokens are `pk.`).
    shape("sk.eyJ", 40, Dotted),
    shape("tk.eyJ", 40, Dotted),
    // Google: API keys, OAuth client secrets, OAuth access tokens.
    shape("AIza", 35, Dashed),
    shape("GOCSPX-", 28, Dashed),
    shape("ya29.", 30, Dashed),
    // Package registries: PyPI (a macaroon), npm.
    shape("pypi-AgE", 60, Dashed),
    shape("npm_", 36, Alnum),
    // Secret stores: Doppler (service, personal, CLI, service account, SCIM,
    // audit), HashiCorp Vault service and batch tokens, age identities.
    shape("dp.st.", 40, Dotted),
    shape("dp.pt.", 40, Dotted),
    shape("dp.ct.", 40, Dotted),
    shape("dp.sa.", 40, Dotted),
    shape("dp.scim.", 40, Dotted),
    shape("dp.audit.", 40, Dotted),
    shape("hvs.", 24, Dashed),
    shape("hvb.", 24, Dashed),
    shape("AGE-SECRET-KEY-1", 50, Upper),
    // Others in wide use: SendGrid, Mailgun, Shopify, Linear, Notion,
    // DigitalOcean, Atlassian, Databricks, Grafana, Postman, Figma,
    // Tailscale, Pulumi, Heroku, Supabase, Fly.io, Honeycomb.
    shape("SG.", 60, Dotted),
    shape("key-", 32, Hex),
    shape("shpat_", 32, Hex),
    shape("shpss_", 32, Hex),
    shape("shpca_", 32, Hex),
    shape("shppa_", 32, Hex),
    shape("lin_api_", 40, Alnum),
    shape("secret_", 43, Alnum),
    shape("ntn_", 40, Alnum),
    shape("dop_v1_", 64, Hex),
    shape("doo_v1_", 64, Hex),
    shape("dor_v1_", 64, Hex),
    shape("ATATT3", 100, Dotted),
    shape("dapi", 32, Hex),
    shape("glsa_", 40, Word),
    shape("glc_", 32, Dashed),
    shape("PMAK-", 59, Dashed),
    shape("figd_", 40, Dashed),
    shape("tskey-auth-", 20, Dashed),
    shape("tskey-api-", 20, Dashed),
    shape("tskey-client-", 20, Dashed),
    shape("pul-", 40, Hex),
    shape("HRKU-", 40, Dashed),
    shape("sbp_", 40, Hex),
    shape("sb_secret_", 30, Dashed),
    shape("fo1_", 40, Dashed),
    shape("fm2_", 40, Dashed),
    shape("hcaik_", 40, Alnum),
    shape("hcxik_", 40, Alnum),
    shape("hcamk_", 20, Alnum),
    shape("hcxmk_", 20, Alnum),
    // Docker Hub: personal and organization access tokens.
    shape("dckr_pat_", 27, Dashed),
    shape("dckr_oat_", 27, Dashed),
    // Sentry: user auth tokens, organization tokens (base64 of JSON).
    shape("sntryu_", 64, Hex),
    shape("sntrys_eyJ", 30, Alnum),
    // New Relic: user, insert and query keys (license keys end in `NRAL`).
    shape("NRAK-", 27, Upper),
    shape("NRII-", 32, Dashed),
    shape("NRIQ-", 32, Dashed),
    // Contentful management tokens; Bitbucket app passwords and access
    // tokens; PlanetScale service tokens, passwords and OAuth tokens;
    // 1Password service account tokens (base64 of JSON).
    shape("CFPAT-", 43, Dashed),
    shape("ATBB", 28, Alnum),
    shape("ATCTT3xFfGN0", 100, Dotted),
    shape("pscale_tkn_", 32, Dotted),
    shape("pscale_pw_", 32, Dotted),
    shape("pscale_oauth_", 32, Dotted),
    shape("ops_eyJ", 20, Alnum),
    // CI and registries: Buildkite user tokens, SonarQube user, project and
    // analysis tokens, RubyGems keys.
    shape("bkua_", 40, Hex),
    shape("squ_", 40, Hex),
    shape("sqp_", 40, Hex),
    shape("sqa_", 40, Hex),
    shape("rubygems_", 48, Hex),
    // Payments and mail: Brevo (Sendinblue), Shippo, Flutterwave, Square.
    shape("xkeysib-", 64, Dashed),
    shape("shippo_live_", 40, Hex),
    shape("shippo_test_", 40, Hex),
    shape("FLWSECK-", 32, Dashed),
    shape("FLWSECK_TEST-", 32, Dashed),
    shape("sq0atp-", 22, Dashed),
    shape("sq0csp-", 43, Dashed),
    shape("EAAA", 60, Dashed),
    // Dynatrace, Prefect, Sourcegraph, Typeform, HubSpot private apps,
    // Langfuse secret keys, PostHog personal keys.
    shape("dt0c01.", 80, Dotted),
    shape("pnu_", 36, Alnum),
    shape("sgp_", 40, Word),
    shape("tfp_", 40, Dotted),
    shape("pat-na1-", 36, Dashed),
    shape("pat-eu1-", 36, Dashed),
    shape("sk-lf-", 36, Dashed),
    shape("phx_", 40, Alnum),
];

/// Keys their providers document as publishable, made to be put in web pages
/// and apps: Stripe's and Clerk's `pk_live_` and `pk_test_`, Mapbox's public
/// `pk.` tokens, Supabase's `sb_publishable_`, PostHog's project key `phc_`.
const PUBLISHABLE: &[Shape] = &[
    shape("pk_live_", 16, Base64),
    shape("pk_test_", 16, Base64),
    shape("pk.eyJ", 20, Dotted),
    shape("sb_publishable_", 16, Dashed),
    shape("phc_", 30, Alnum),
];

impl Shape {
    fn matches(&self, word: &str) -> bool {
        word.strip_prefix(self.prefix)
            .is_some_and(|rest| rest.len() >= self.min && rest.chars().all(|c| self.alphabet.allows(c)))
    }
}

/// Whether all of `value` is a key documented as publishable ([`PUBLISHABLE`]).
pub(super) fn is_publishable(value: &str) -> bool {
    PUBLISHABLE.iter().any(|shape| shape.matches(value))
}

/// Whether `word` is a token of a shape this module knows that is a secret
/// wherever it is: [`is_token`] but for the shapes made to be served to
/// browsers (a JWT, such as Supabase's anon key, unless its role says
/// `service_role`; Google's `AIza` keys, which Firebase and Maps put in web
/// pages).
pub(super) fn is_secret_shape(word: &str) -> bool {
    is_token(word) && !word.starts_with("AIza") && (!is_jwt(word) || is_service_role_jwt(word))
}

/// A JWT whose payload gives it the `service_role` (Supabase's key that
/// bypasses row-level security).
fn is_service_role_jwt(word: &str) -> bool {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    let payload = word.split('.').nth(1).unwrap_or_default().trim_end_matches('=');
    URL_SAFE_NO_PAD.decode(payload).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains("\"service_role\""))
}

/// The shapes whose prefix starts with `word`'s first byte: [`SHAPES`] is
/// tried for every word of every value, so it is grouped by that byte once.
fn shapes_starting(word: &str) -> impl Iterator<Item = &'static Shape> {
    static BY_FIRST: OnceLock<Vec<Vec<&'static Shape>>> = OnceLock::new();
    let by_first = BY_FIRST.get_or_init(|| {
        let mut by_first = vec![Vec::new(); 256];
        for shape in SHAPES {
            by_first[usize::from(shape.prefix.as_bytes()[0])].push(shape);
        }
        by_first
    });
    word.bytes().next().into_iter().flat_map(|first| by_first[usize::from(first)].iter().copied())
}

/// Whether `word` (letters, digits and `_ - . ~`, as found in a value) is a
/// token of a shape this module knows.
pub(super) fn is_token(word: &str) -> bool {
    if word.len() < 14 {
        return false;
    }
    shapes_starting(word).any(|shape| shape.matches(word))
        || is_sk_key(word)
        || is_aws_access_key(word)
        || is_jwt(word)
        || is_azure_client_secret(word)
        || is_terraform_cloud_token(word)
        || is_langsmith_key(word)
        || is_legacy_vault_token(word)
        || is_discord_bot_token(word)
        || is_new_relic_license_key(word)
        || is_airtable_token(word)
}

/// A Discord bot token: the bot's id in base64 (an id of 17 to 20 digits
/// encodes to a start of `M`, `N` or `O`), a timestamp and an HMAC, joined by
/// dots.
fn is_discord_bot_token(word: &str) -> bool {
    let mut parts = word.split('.');
    let (Some(id), Some(time), Some(hmac), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    (23..=28).contains(&id.len())
        && id.starts_with(['M', 'N', 'O'])
        && id.chars().all(|c| Alnum.allows(c))
        && looks_random(id)
        && (6..=7).contains(&time.len())
        && time.chars().all(|c| Dashed.allows(c))
        && (27..=38).contains(&hmac.len())
        && hmac.chars().all(|c| Dashed.allows(c))
}

/// A New Relic license (ingest) key: 36 hex digits, then `NRAL`.
fn is_new_relic_license_key(word: &str) -> bool {
    word.len() == 40 && word.ends_with("NRAL") && word[..36].chars().all(|c| c.is_ascii_hexdigit())
}

/// An Airtable personal access token: `pat`, 14 letters and digits, `.`,
/// 64 hex digits.
fn is_airtable_token(word: &str) -> bool {
    word.strip_prefix("pat").and_then(|rest| rest.split_once('.')).is_some_and(|(id, secret)| {
        id.len() == 14
            && id.chars().all(|c| Alnum.allows(c))
            && secret.len() == 64
            && secret.chars().all(|c| Hex.allows(c))
    })
}

/// Whether `value` holds a Telegram bot token: the bot's id (8 to 10 digits),
/// `:`, and 35 characters of base64url, alone (`123456789:AA…`) or in a bot
/// API URL (`…/bot123456789:AA…/sendMessage`). A colon splits the words
/// [`is_token`] is given, so the value is searched instead.
pub(super) fn has_telegram_bot_token(value: &str) -> bool {
    value.match_indices(':').any(|(at, _)| {
        let before = &value[..at];
        let id = before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        (8..=10).contains(&id) && value[at + 1..].chars().take(36).take_while(|&c| Dashed.allows(c)).count() == 35
    })
}

/// A LangSmith key: `lsv2_pt_` (personal) or `lsv2_sk_` (service), 32 hex
/// digits, `_`, 10 hex digits.
fn is_langsmith_key(word: &str) -> bool {
    let Some(rest) = word.strip_prefix("lsv2_pt_").or_else(|| word.strip_prefix("lsv2_sk_")) else { return false };
    let hex = |part: &str, len: usize| part.len() == len && part.chars().all(|c| Hex.allows(c));
    rest.split_once('_').is_some_and(|(key, check)| hex(key, 32) && hex(check, 10))
}

/// A HashiCorp Vault service token before 1.10: `s.` and exactly 24 base62
/// characters. `s.` starts many names, so the random part must be that
/// length and mix upper case, lower case and digits, as base62 does.
fn is_legacy_vault_token(word: &str) -> bool {
    word.strip_prefix("s.").is_some_and(|rest| {
        rest.len() == 24
            && rest.chars().all(|c| Alnum.allows(c))
            && rest.chars().any(|c| c.is_ascii_uppercase())
            && rest.chars().any(|c| c.is_ascii_lowercase())
            && rest.chars().any(|c| c.is_ascii_digit())
    })
}

/// `sk-`, an optional label (`proj-`, `ant-api03-`, `or-v1-`, `svcacct-`), and
/// a random part: OpenAI, Anthropic, OpenRouter, DeepSeek and many others. The
/// random part has a run of 16 or more characters without `-` that mixes
/// letters and digits, which words joined by hyphens do not.
fn is_sk_key(word: &str) -> bool {
    let Some(rest) = word.strip_prefix("sk-") else { return false };
    rest.len() >= 20
        && rest.chars().all(|c| Dashed.allows(c))
        && rest.split('-').any(|run| run.len() >= 16 && looks_random(run))
}

/// Whether `text` mixes letters and digits, as generated secrets do and words do not.
pub(super) fn looks_random(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit()) && text.chars().any(|c| c.is_ascii_alphabetic())
}

/// An AWS access key id (`AKIA…`) or temporary one (`ASIA…`): 16 base32
/// characters after the prefix. Resource ids with other prefixes are not keys.
fn is_aws_access_key(word: &str) -> bool {
    word.len() == 20
        && (word.starts_with("AKIA") || word.starts_with("ASIA"))
        && word[4..].chars().all(|c| Upper.allows(c))
}

/// Three base64url segments, the first a JSON object's encoding (`eyJ…`).
fn is_jwt(word: &str) -> bool {
    if !word.starts_with("eyJ") {
        return false;
    }
    let mut segments = word.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (segments.next(), segments.next(), segments.next(), segments.next())
    else {
        return false;
    };
    header.len() >= 8
        && payload.len() >= 8
        && [header, payload, signature].into_iter().all(|segment| segment.chars().all(|c| Dashed.allows(c)))
}

/// A Microsoft Entra (Azure AD) client secret: three characters, a digit,
/// `Q~`, then 31 to 34 more.
fn is_azure_client_secret(word: &str) -> bool {
    let bytes = word.as_bytes();
    (34..=40).contains(&word.len())
        && bytes[3].is_ascii_digit()
        && &bytes[4..6] == b"Q~"
        && word.chars().all(|c| Dotted.allows(c) || c == '~')
}

/// A Terraform Cloud / HCP Terraform API token: `<14>.atlasv1.<60 or more>`.
fn is_terraform_cloud_token(word: &str) -> bool {
    word.split_once(".atlasv1.").is_some_and(|(id, secret)| id.len() == 14 && secret.len() >= 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_token_shapes_are_tokens() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        for word in [
            "ghp_0123456789abcdefghijABCDEFGHIJklmnop",
            "glpat-0123456789abcdefghij",
            "sk-proj-Zx81kQ2mN7pL0vB4cD9eF3gH6jK5lM8nO1pQ4rS7tU0vW",
            "sk-0123456789abcdef0123456789abcdef",
            "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr",
            "gsk_8f7Hq2LmN4pR6sT8vX0zB3dF5hJ7kM9nQ1rS3tV5wY7aC9eG",
            "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
            "AIzaSyD-1234567890abcdefghijklmnopqrstu",
            "AKIAIOSFODNN7ABCDEFG",
            "xoxb-1234567890-abcdef",
            "dp.st.dev.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd",
            "Abc8Q~0123456789abcdefghijklmnopqrstu",
            jwt,
        ] {
            assert!(is_token(word), "{word}");
        }
    }

    #[test]
    fn prefixes_alone_and_words_after_them_are_not_tokens() {
        for word in [
            "sk-fix-login-redirect-loop",
            "sk-build-07",
            "sk-1234-update-dependencies",
            "ghp_",
            "npm_install_dependencies",
            "hf_transfer_enabled_here",
            "AKIA",
            "eyJ.not.jwt",
            "xterm-256color",
            "key-value-store-settings-file",
            "secret_santa_list_for_the_team_party",
        ] {
            assert!(!is_token(word), "{word}");
        }
    }

    #[test]
    fn publishable_keys_are_their_prefix_then_their_alphabet() {
        for value in [
            "pk_live_51H8xYzAbCdEfGhIjKlMnOpQr",
            "pk_test_Y2xlcmsuYWNtZS5pbyQ=",
            "pk.eyJ1IjoiYWNtZSIsImEiOiJjbHgifQ.AbCdEf-12",
            "sb_publishable_Zq8Lw3Xv9Tp2Nc7Rb4Hm",
            "phc_Zq8Lw3Xv9Tp2Nc7Rb4HmZq8Lw3Xv9Tp2Nc7",
        ] {
            assert!(is_publishable(value), "{value}");
        }
        for value in
            ["pk_live_", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "pk_live_51H8 and more", "sk.eyJ1IjoiYWNtZSJ9.abc"]
        {
            assert!(!is_publishable(value), "{value}");
        }
    }

    #[test]
    fn shapes_served_to_browsers_are_not_secret_shapes_but_a_service_role_jwt_is() {
        let anon = "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYW5vbiJ9.c2lnbmF0dXJlc2lnbmF0dXJl";
        let service = "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.c2lnbmF0dXJlc2lnbmF0dXJl";
        assert!(is_token(anon) && !is_secret_shape(anon));
        assert!(is_secret_shape(service));
        assert!(!is_secret_shape("AIzaSyD-1234567890abcdefghijklmnopqrstu"));
        assert!(is_secret_shape("ghp_0123456789abcdefghijABCDEFGHIJklmnop"));
        assert!(is_secret_shape("sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"));
    }

    #[test]
    fn discord_new_relic_and_airtable_tokens_have_their_own_shapes() {
        assert!(is_token("MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"));
        assert!(!is_token("MyServiceConfigurationAbc.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"));
        assert!(!is_token("MTIzNDU2Nzg5MDEyMzQ1Njc4.release.notes"));
        assert!(is_token("0123456789abcdef0123456789abcdef0123NRAL"));
        assert!(!is_token("0123456789abcdef0123456789abcdef0123NRAK"));
        assert!(is_token(&format!("patAbCdEf01234567.{}", "0123456789abcdef".repeat(4))));
        assert!(!is_token("patterns.for.the.matcher"));
    }

    #[test]
    fn a_telegram_bot_token_is_a_bot_id_a_colon_and_35_characters() {
        let token = "7012345678:AAH3kq9Zx81kQ2mN7pL0vB4cD9eF3gH6jK5";
        assert!(has_telegram_bot_token(token));
        assert!(has_telegram_bot_token(&format!("https://api.telegram.org/bot{token}/sendMessage")));
        for value in [
            "20240601:20240630",
            "0.0.0.0:8080",
            "7012345678:AAH3kq9Zx81kQ2mN7pL0vB4cD9eF3gH6jK5x",
            "1234567:AAH3kq9Zx81kQ2mN7pL0vB4cD9eF3gH6jK5",
        ] {
            assert!(!has_telegram_bot_token(value), "{value}");
        }
    }

    #[test]
    fn a_langsmith_key_is_its_prefix_then_32_and_10_hex_digits() {
        assert!(is_token("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"));
        assert!(is_token("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"));
        assert!(!is_token("lsv2_pt_0f3a9c2e7b1d4a6f8e0c2b4d6f8a1c3e"));
        assert!(!is_token("lsv2_pt_not_a_key_but_a_long_label_for_docs"));
    }

    #[test]
    fn a_legacy_vault_token_is_s_dot_and_24_mixed_base62_characters() {
        assert!(is_token("s.Zq8Lw3Xv9Tp2Nc7Rb4HmAbCd"));
        // Too short or too long, or words and digits rather than base62.
        assert!(!is_token("s.Zq8Lw3Xv9Tp2Nc7Rb4HmAb"));
        assert!(!is_token("s.Zq8Lw3Xv9Tp2Nc7Rb4HmAbCdE"));
        assert!(!is_token("s.paymentsreconciler202406"));
        assert!(!is_token("s.PaymentsReconcilerQueues"));
    }
}
