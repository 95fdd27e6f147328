//! The parent environment a child's is built from, as one packed text: the
//! package's JS layer reads the caller's `process.env` in one pass and hands
//! it over as a single string, instead of a Node-API call per name and value,
//! and a parent kept as text is compared with the last ones in one `memcmp`
//! (see `remembered`).
//!
//! The text is `<entries>\0` followed by `<name>\0<value>\0` for each entry,
//! in the order read: the format of one resolver's answer in
//! `crate::packed`. No name or value holds a NUL: an entry with one goes to
//! the names of entries no child could be given, with those whose value is
//! not text at all.

use std::fmt;

const SEPARATOR: u8 = b'\0';

/// The parent environment: its entries packed in one text, and the names of
/// the entries no child could be given (reported as unrepresentable).
#[derive(Clone, PartialEq, Eq)]
pub struct Parent {
    /// `<entries>\0` then `<name>\0<value>\0` per entry; well-formed (checked
    /// when made).
    text: String,
    unrepresentable: Vec<String>,
}

/// A packed parent that does not follow the format: the package's JS layer
/// never writes one, a direct caller of the binding might.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the packed parent environment is malformed")]
pub struct MalformedParent;

impl Parent {
    /// A parent of `pairs`; an entry whose name or value holds a NUL cannot
    /// be packed, and could reach no child: its name is kept among the
    /// unrepresentable ones.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        Self::from_read(pairs, Vec::new())
    }

    /// A parent of `pairs` read from a caller's object, with the names of
    /// its entries that held no text a child could be given (a value that is
    /// not a string, a lone surrogate): as [`Parent::from_pairs`], those
    /// names kept among the unrepresentable ones.
    pub fn from_read(pairs: impl IntoIterator<Item = (String, String)>, mut unrepresentable: Vec<String>) -> Self {
        let mut entries = 0usize;
        let mut body = String::new();
        for (name, value) in pairs {
            if name.contains('\0') || value.contains('\0') {
                unrepresentable.push(name);
                continue;
            }
            body.push_str(&name);
            body.push('\0');
            body.push_str(&value);
            body.push('\0');
            entries += 1;
        }
        let mut text = format!("{entries}\0");
        text.push_str(&body);
        Self { text, unrepresentable }
    }

    /// A parent packed by the package's JS layer, with the names of the
    /// entries it found holding no text a child could be given (a value that
    /// is not a string, a lone surrogate, a NUL). Checked here: every entry
    /// counted is there, nothing follows them.
    pub fn from_packed(text: String, unrepresentable: Vec<String>) -> Result<Self, MalformedParent> {
        let (count, _) = text.split_once('\0').ok_or(MalformedParent)?;
        let entries: usize = match count.bytes().all(|byte| byte.is_ascii_digit()) {
            true => count.parse().map_err(|_| MalformedParent)?,
            false => return Err(MalformedParent),
        };
        // Every field ends with a NUL and holds none: the count, then a name
        // and a value per entry. (Counted in one pass the compiler vectorises.)
        let fields = text.bytes().filter(|&byte| byte == SEPARATOR).count();
        if !text.ends_with('\0') || entries.checked_mul(2).and_then(|names| names.checked_add(1)) != Some(fields) {
            return Err(MalformedParent);
        }
        Ok(Self { text, unrepresentable })
    }

    /// The names and values, in the order read.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        let body = match self.text.find('\0') {
            Some(end) => &self.text[end + 1..],
            None => "",
        };
        let mut fields = body.split_terminator('\0');
        std::iter::from_fn(move || Some((fields.next()?, fields.next()?)))
    }

    /// The names of the entries no child could be given, as read.
    pub fn unrepresentable(&self) -> &[String] {
        &self.unrepresentable
    }

    /// The packed text's length in bytes: what remembering this parent costs.
    pub(super) fn text_len(&self) -> usize {
        self.text.len()
    }
}

impl Default for Parent {
    /// No variables at all.
    fn default() -> Self {
        Self::from_pairs([])
    }
}

impl fmt::Debug for Parent {
    // Values are the host's own, credentials among them: only the names are shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parent")
            .field("names", &self.entries().map(|(name, _)| name).collect::<Vec<_>>())
            .field("unrepresentable", &self.unrepresentable)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn pairs_read_back_in_order_with_empty_names_and_values_and_nuls_set_apart() {
        let parent = Parent::from_pairs(owned(&[("A", "1"), ("", ""), ("NUL", "a\0b"), ("B", "x=y"), ("A", "2")]));
        let entries: Vec<_> = parent.entries().collect();
        assert_eq!(entries, [("A", "1"), ("", ""), ("B", "x=y"), ("A", "2")]);
        assert_eq!(parent.unrepresentable(), ["NUL"]);
    }

    #[test]
    fn a_packed_parent_is_what_the_same_pairs_make() {
        let packed = Parent::from_packed("2\0PATH\0/bin\0EMPTY\0\0".into(), vec!["LONE\u{fffd}".into()]).unwrap();
        let entries: Vec<_> = packed.entries().collect();
        assert_eq!(entries, [("PATH", "/bin"), ("EMPTY", "")]);
        assert_eq!(packed.unrepresentable(), ["LONE\u{fffd}"]);
        let same = Parent::from_pairs(owned(&[("PATH", "/bin"), ("EMPTY", "")]));
        assert_eq!(Parent { unrepresentable: Vec::new(), ..packed }, same);
        assert_eq!(Parent::from_packed("0\0".into(), Vec::new()).unwrap().entries().count(), 0);
    }

    #[test]
    fn a_malformed_packed_parent_is_refused_not_misread() {
        for text in ["", "x\0", "1\0A\0", "1\0A\0a\0B\0", "1\0A\0a", "+1\0A\0a\0", "99999999999999999999999\0"] {
            assert_eq!(Parent::from_packed(text.into(), Vec::new()), Err(MalformedParent), "{text:?}");
        }
    }

    #[test]
    fn debug_output_shows_names_but_never_values() {
        let shown = format!("{:?}", Parent::from_pairs(owned(&[("API_TOKEN", "ghp_secret")])));
        assert!(shown.contains("API_TOKEN") && !shown.contains("ghp_secret"), "{shown}");
    }
}
