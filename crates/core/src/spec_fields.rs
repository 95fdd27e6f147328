//! A spec's fields, declared once. [`spec_fields!`] declares a request struct
//! field by field, each with the spec field it is read from, in the order
//! they are read (so that the first bad field is the one reported), and
//! makes from that one table:
//! - the struct;
//! - `FIELDS`, the names of its spec fields, which a reader checks an options
//!   object against;
//! - `read`, the walk over a [`SpecReader`] that fills it.
//!
//! A field's Rust type says how it is read ([`FromSpec`]): `Option<String>`
//! a string, `Option<f64>` a number, `f64` a number that must be given,
//! `bool` a boolean (`false` when absent), and a struct declared here a
//! nested options object. A host implements [`SpecReader`] for its values:
//! the binding for JS values, a test for plain data.

use crate::error::ExecError;

/// How a host reads the fields of a spec object. Each method reads field
/// `field` of this object; absent (`undefined`) is `None`.
pub trait SpecReader {
    /// What a failed read is: the binding's carries the field's path and
    /// the value a getter threw.
    type Error: From<ExecError>;
    /// A reader of a nested options object.
    type Nested<'a>: SpecReader<Error = Self::Error>
    where
        Self: 'a;

    /// A string.
    fn string(&self, field: &'static str) -> Result<Option<String>, Self::Error>;
    /// A number.
    fn number(&self, field: &'static str) -> Result<Option<f64>, Self::Error>;
    /// A number that must be given.
    fn required_number(&self, field: &'static str) -> Result<f64, Self::Error>;
    /// A boolean.
    fn boolean(&self, field: &'static str) -> Result<Option<bool>, Self::Error>;
    /// A string, or an array of strings.
    fn text_or_list(&self, field: &'static str) -> Result<Option<TextOrList>, Self::Error>;
    /// Bytes: a string's UTF-8, or a `Uint8Array`'s.
    fn bytes(&self, field: &'static str) -> Result<Option<Vec<u8>>, Self::Error>;
    /// An options object (`expected` says what it must be when it is not
    /// one) whose every field is one of `known`.
    fn object(
        &self,
        field: &'static str,
        expected: &'static str,
        known: &'static [&'static str],
    ) -> Result<Option<Self::Nested<'_>>, Self::Error>;
}

/// What [`SpecReader::text_or_list`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextOrList {
    /// A string.
    Text(String),
    /// An array of strings.
    List(Vec<String>),
}

/// A field's type, read from spec field `field` through a [`SpecReader`].
pub trait FromSpec: Sized {
    /// Reads it.
    fn from_spec<R: SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error>;
}

impl FromSpec for Option<String> {
    fn from_spec<R: SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
        reader.string(field)
    }
}

impl FromSpec for Option<f64> {
    fn from_spec<R: SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
        reader.number(field)
    }
}

impl FromSpec for f64 {
    fn from_spec<R: SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
        reader.required_number(field)
    }
}

/// `false` when absent.
impl FromSpec for bool {
    fn from_spec<R: SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
        Ok(reader.boolean(field)?.unwrap_or(false))
    }
}

impl FromSpec for Option<Vec<u8>> {
    fn from_spec<R: SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
        reader.bytes(field)
    }
}

/// Declares a request struct read from a spec's options object (see the
/// module's note). `in "…"` says what the object must be when it is not
/// one; `absent is default` makes an absent object the struct's default
/// (else it reads as `Option<Struct>`); `also { … }` adds fields no spec
/// field fills here (left at their default by `read`).
#[macro_export]
macro_rules! spec_fields {
    (
        $(#[$meta:meta])*
        pub struct $name:ident in $expected:literal $(, absent is $default:ident)? {
            $( $(#[$doc:meta])* $field:ident: $ty:ty = $js:literal, )*
        }
        $( also { $( $(#[$also_doc:meta])* $also:ident: $also_ty:ty, )* } )?
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$doc])* pub $field: $ty, )*
            $($( $(#[$also_doc])* pub $also: $also_ty, )*)?
        }

        impl $name {
            /// The spec fields it is read from, in the order they are read.
            pub const FIELDS: &'static [&'static str] = &[$($js),*];

            /// Reads every field through `reader`, in the order of `FIELDS`.
            pub fn read<R: $crate::spec_fields::SpecReader>(reader: &R) -> Result<Self, R::Error> {
                // A struct expression evaluates its fields in the order written.
                Ok(Self {
                    $( $field: $crate::spec_fields::FromSpec::from_spec(reader, $js)?, )*
                    $($( $also: Default::default(), )*)?
                })
            }
        }

        impl $crate::spec_fields::FromSpec for Option<$name> {
            fn from_spec<R: $crate::spec_fields::SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
                match reader.object(field, $expected, $name::FIELDS)? {
                    Some(nested) => Ok(Some($name::read(&nested)?)),
                    None => Ok(None),
                }
            }
        }

        $( $crate::spec_fields!(@absent $default $name); )?
    };
    (@absent default $name:ident) => {
        impl $crate::spec_fields::FromSpec for $name {
            fn from_spec<R: $crate::spec_fields::SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
                Ok(<Option<$name> as $crate::spec_fields::FromSpec>::from_spec(reader, field)?.unwrap_or_default())
            }
        }
    };
}

pub use spec_fields;

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    use super::*;
    use crate::command::{CommandLine, ExecRequest, RawTerminalSize, StdioRequest, SPEC_FIELDS};
    use crate::limits::{Limit, Limits, RawLimits, LIMIT_FIELDS};

    /// A spec as plain data: fields by path (`stdio.terminal.rows`), each a
    /// number or a string; objects are present when any field below is. It
    /// records every read, in order.
    struct Plain<'a> {
        fields: &'a BTreeMap<String, Value>,
        prefix: String,
        reads: &'a RefCell<Vec<String>>,
    }

    #[derive(Clone)]
    enum Value {
        Number(f64),
        Text(&'static str),
    }

    impl Plain<'_> {
        fn at(&self, field: &str) -> Option<Value> {
            let path = format!("{}{field}", self.prefix);
            self.reads.borrow_mut().push(path.clone());
            self.fields.get(path.as_str()).cloned()
        }
    }

    impl SpecReader for Plain<'_> {
        type Error = ExecError;
        type Nested<'a>
            = Plain<'a>
        where
            Self: 'a;

        fn string(&self, field: &'static str) -> Result<Option<String>, ExecError> {
            match self.at(field) {
                Some(Value::Text(text)) => Ok(Some(text.into())),
                Some(Value::Number(_)) => Err(ExecError::invalid_spec(field, "must be a string")),
                None => Ok(None),
            }
        }

        fn number(&self, field: &'static str) -> Result<Option<f64>, ExecError> {
            match self.at(field) {
                Some(Value::Number(number)) => Ok(Some(number)),
                Some(Value::Text(_)) => Err(ExecError::invalid_spec(field, "must be a number")),
                None => Ok(None),
            }
        }

        fn required_number(&self, field: &'static str) -> Result<f64, ExecError> {
            self.number(field)?.ok_or_else(|| ExecError::invalid_spec(field, "must be a number (got undefined)"))
        }

        fn boolean(&self, field: &'static str) -> Result<Option<bool>, ExecError> {
            Ok(self.string(field)?.map(|text| text == "true"))
        }

        fn text_or_list(&self, field: &'static str) -> Result<Option<TextOrList>, ExecError> {
            Ok(self.string(field)?.map(TextOrList::Text))
        }

        fn bytes(&self, field: &'static str) -> Result<Option<Vec<u8>>, ExecError> {
            Ok(self.string(field)?.map(String::into_bytes))
        }

        fn object(
            &self,
            field: &'static str,
            _expected: &'static str,
            known: &'static [&'static str],
        ) -> Result<Option<Plain<'_>>, ExecError> {
            let prefix = format!("{}{field}.", self.prefix);
            self.reads.borrow_mut().push(format!("{}{field}", self.prefix));
            let below: Vec<&str> = self.fields.keys().filter_map(|path| path.strip_prefix(prefix.as_str())).collect();
            if below.is_empty() {
                return Ok(None);
            }
            let own = below.iter().map(|rest| rest.split('.').next().unwrap_or(rest));
            crate::command::check_fields(&prefix, own, known)?;
            Ok(Some(Plain { fields: self.fields, prefix, reads: self.reads }))
        }
    }

    fn read(fields: &[(&str, Value)]) -> (Result<ExecRequest, ExecError>, Vec<String>) {
        let fields: BTreeMap<_, _> = fields.iter().map(|(path, value)| (path.to_string(), value.clone())).collect();
        let reads = RefCell::new(Vec::new());
        let request = ExecRequest::read(&Plain { fields: &fields, prefix: String::new(), reads: &reads });
        (request, reads.into_inner())
    }

    #[test]
    fn a_request_is_read_field_by_field_in_its_declared_order_nested_objects_included() {
        let (request, reads) = read(&[
            ("command", Value::Text("true")),
            ("graceMs", Value::Number(5.0)),
            ("keepSpillFiles", Value::Text("true")),
            ("stdio.terminal.rows", Value::Number(24.0)),
            ("stdio.terminal.cols", Value::Number(80.0)),
            ("limits.openFiles", Value::Number(64.0)),
        ]);
        let request = request.unwrap();
        assert_eq!(request.command, Some(CommandLine::Script("true".into())));
        assert_eq!(request.grace_ms, Some(5.0));
        assert!(request.keep_spill_files);
        assert_eq!(request.stdio.terminal, Some(RawTerminalSize { rows: 24.0, cols: 80.0 }));
        assert_eq!(request.limits, RawLimits { open_files: Some(64.0), ..RawLimits::default() });
        let expected: Vec<String> = ExecRequest::FIELDS
            .iter()
            .flat_map(|field| match *field {
                "stdio" => std::iter::once("stdio".to_owned())
                    .chain(StdioRequest::FIELDS.iter().flat_map(|nested| {
                        match *nested {
                            "terminal" => std::iter::once("stdio.terminal".to_owned())
                                .chain(RawTerminalSize::FIELDS.iter().map(|cell| format!("stdio.terminal.{cell}")))
                                .collect::<Vec<_>>(),
                            nested => vec![format!("stdio.{nested}")],
                        }
                    }))
                    .collect::<Vec<_>>(),
                "limits" => std::iter::once("limits".to_owned())
                    .chain(LIMIT_FIELDS.iter().map(|limit| format!("limits.{limit}")))
                    .collect(),
                field => vec![field.to_owned()],
            })
            .collect();
        assert_eq!(reads, expected);
    }

    #[test]
    fn the_first_bad_field_in_read_order_is_the_one_reported() {
        // `timeoutMs` is read before `graceMs`, and the spec's fields before its limits.
        let (request, _) = read(&[("graceMs", Value::Text("x")), ("timeoutMs", Value::Text("y"))]);
        assert!(request.unwrap_err().to_string().contains("timeoutMs"));
        let (request, reads) = read(&[("limits.memoryBytes", Value::Text("x")), ("stdio.stdin", Value::Number(1.0))]);
        assert!(request.unwrap_err().to_string().contains("stdin"));
        assert!(!reads.iter().any(|read| read.starts_with("limits")), "{reads:?}");
    }

    #[test]
    fn a_missing_required_number_and_an_unknown_nested_field_are_refused() {
        let (request, _) = read(&[("stdio.terminal.rows", Value::Number(24.0))]);
        assert!(request.unwrap_err().to_string().contains("cols"));
        let (request, _) = read(&[("stdio.terminal.depth", Value::Number(1.0))]);
        assert!(request.unwrap_err().to_string().contains("stdio.terminal.depth"));
    }

    #[test]
    fn each_limit_is_read_from_its_own_field() {
        let given: Vec<(String, Value)> = LIMIT_FIELDS
            .iter()
            .enumerate()
            .map(|(at, field)| (format!("limits.{field}"), Value::Number(1e9 + at as f64)))
            .collect();
        let given: Vec<(&str, Value)> = given.iter().map(|(path, value)| (path.as_str(), value.clone())).collect();
        let limits = Limits::try_from(read(&given).0.unwrap().limits).unwrap();
        for limit in Limit::ALL {
            let at = LIMIT_FIELDS.iter().position(|field| *field == limit.field()).unwrap();
            assert_eq!(limits.get(limit), Some(1_000_000_000 + at as u64), "{limit:?}");
        }
    }

    #[test]
    fn every_request_field_is_a_spec_field() {
        for field in ExecRequest::FIELDS {
            assert!(SPEC_FIELDS.contains(field), "{field} is read but not in SPEC_FIELDS");
        }
    }
}
