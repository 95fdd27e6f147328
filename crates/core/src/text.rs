//! The rule for text that reaches the core from a UTF-16 world (JavaScript):
//! it must be well-formed. A lone surrogate has no UTF-8 form, and an
//! environment block, a path or a name is bytes. Replacing it with U+FFFD, as
//! `TextEncoder` does, would silently hand a child (or a listing) something
//! other than what the caller wrote, so such text is refused instead, with the
//! field named by whoever reports it.

/// UTF-16 text holding an unpaired surrogate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be well-formed Unicode (lone surrogate U+{unit:04X} at index {index})")]
pub struct IllFormedText {
    /// The position of the surrogate, in UTF-16 code units.
    pub index: usize,
    /// The surrogate itself.
    pub unit: u16,
}

/// The reason given where a fixed message is needed.
pub const ILL_FORMED: &str = "must be well-formed Unicode (it holds a lone surrogate)";

/// Decodes UTF-16, refusing the first unpaired surrogate.
pub fn from_utf16(units: &[u16]) -> Result<String, IllFormedText> {
    let mut text = String::with_capacity(units.len());
    let mut index = 0;
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok(c) => {
                text.push(c);
                index += c.len_utf16();
            }
            Err(error) => return Err(IllFormedText { index, unit: error.unpaired_surrogate() }),
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn units(text: &str) -> Vec<u16> {
        text.encode_utf16().collect()
    }

    #[test]
    fn well_formed_text_round_trips() {
        for text in ["", "DSH_A", "é", "\u{FFFD}", "😀 and 中文", "a\0b"] {
            assert_eq!(from_utf16(&units(text)).as_deref(), Ok(text));
        }
    }

    #[test]
    fn lone_surrogates_are_refused_with_their_position() {
        assert_eq!(from_utf16(&[0xD800]), Err(IllFormedText { index: 0, unit: 0xD800 }));
        assert_eq!(from_utf16(&[0x61, 0xDC00, 0x62]), Err(IllFormedText { index: 1, unit: 0xDC00 }));
        // A high surrogate followed by something other than a low one.
        assert_eq!(from_utf16(&[0x61, 0xD83D, 0x61]), Err(IllFormedText { index: 1, unit: 0xD83D }));
        // After a pair, the index counts both of its units.
        let mut text = units("😀");
        text.push(0xDFFF);
        assert_eq!(from_utf16(&text), Err(IllFormedText { index: 2, unit: 0xDFFF }));
        // Reversed pair: the low surrogate comes first and is alone.
        assert_eq!(from_utf16(&[0xDE00, 0xD83D]).unwrap_err().index, 0);
    }

    #[test]
    fn the_message_says_what_is_wrong() {
        let message = from_utf16(&[0x41, 0xD800]).unwrap_err().to_string();
        assert_eq!(message, "must be well-formed Unicode (lone surrogate U+D800 at index 1)");
    }

    proptest! {
        #[test]
        fn any_rust_string_is_accepted(text in "\\PC{0,40}") {
            prop_assert_eq!(from_utf16(&units(&text)), Ok(text));
        }

        #[test]
        fn any_unit_sequence_is_accepted_exactly_when_std_accepts_it(raw in proptest::collection::vec(any::<u16>(), 0..16)) {
            prop_assert_eq!(from_utf16(&raw).ok(), String::from_utf16(&raw).ok());
        }
    }
}
