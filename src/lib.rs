use napi::bindgen_prelude::*;
use napi_derive::napi;

pub struct Code(String);
impl AsRef<str> for Code { fn as_ref(&self) -> &str { &self.0 } }
impl From<Status> for Code { fn from(s: Status) -> Self { Code(s.as_ref().to_string()) } }

#[napi]
pub fn fail_custom(code: String) -> Result<(), Code> {
  Err(Error::new(Code(code), "custom message"))
}

#[napi]
pub fn fail_with_cause(f: Function<(), ()>) -> Result<(), Code> {
  match f.call(()) {
    Ok(()) => Ok(()),
    Err(e) => {
      let mut err = Error::new(Code("ERR_X".into()), "wrapped");
      err.set_cause(e);
      Err(err)
    }
  }
}
