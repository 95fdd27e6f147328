//! The few raw Node-API operations the binding needs with exact exception
//! handling: every one that can run user JavaScript (getters, Proxy traps,
//! resolvers) clears a thrown exception and returns it as a `napi::Error` that
//! still holds the thrown value, so nothing is ever left pending.
//!
//! # The Node-API contract
//!
//! Every raw `napi_*` call in the binding (here and in the other modules,
//! whose SAFETY comments point here) holds to this, which is all Node-API
//! asks of a caller for memory safety:
//! - it runs on the JS thread of the `env` it is given, inside the callback
//!   that `env` came with (so `env` is live and a handle scope is open);
//! - every `napi_value` passed belongs to that scope: an argument of the
//!   callback, or made by an earlier call in it;
//! - every out-pointer points to an initialised local of the right type.
//!
//! Node-API checks the kind of each value and reports a mismatch as a status,
//! never as undefined behaviour; a status is checked, or the out-value was
//! initialised to a safe default before the call.
//!
//! # Which reads are napi-rs's, and which are raw
//!
//! Reads that cannot run user JavaScript convert through napi-rs
//! (`FromNapiValue`): a number, a boolean, an array's length, a typed
//! array's bytes. Still `unsafe` to call, from a raw value, under the same
//! contract. The rest are raw calls, for one of these reasons:
//! - they can run user code, and a throw must be cleared and kept with the
//!   value thrown ([`check`]): getting a property (getters, Proxy traps),
//!   listing keys, `then`, calling a function, `Object.freeze`;
//! - strings: read as UTF-8, a lone surrogate comes out replaced, and it
//!   must be refused instead ([`string`] reads the UTF-16 when a
//!   replacement character shows);
//! - references: napi-rs's `UnknownRef` is deleted only by consuming it
//!   (`unref(self)`) and reports a leak when dropped otherwise, where a
//!   reference here is deleted by its owner's `Drop` on the JS thread;
//! - objects built from a list of names known only at run time, with all
//!   their properties defined in one call ([`object_of_strings`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ptr;

use dsh_shell_env_core::text::{self, IllFormedText};
use napi::bindgen_prelude::*;
use napi::{sys, ValueType};

/// A raw JS value valid for the current handle scope.
pub type Raw = sys::napi_value;

/// Turns a Node-API status into a `Result`. A thrown exception is cleared and
/// kept, whatever was thrown (a string, `undefined`, an object), without
/// running any of its code: the `napi::Error` carries the value itself.
pub fn check(env: &Env, status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        return Ok(());
    }
    // Several calls report a throwing getter or trap as a generic failure,
    // not `napi_pending_exception`, so ask the engine instead of the status.
    let mut pending = false;
    // SAFETY: the Node-API contract (module documentation).
    let asked = unsafe { sys::napi_is_exception_pending(env.raw(), &mut pending) };
    if asked != sys::Status::napi_ok || !pending {
        return Err(napi::Error::from_status(Status::from(status)));
    }
    let mut thrown = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    let taken = unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut thrown) };
    if taken != sys::Status::napi_ok || thrown.is_null() {
        return Err(napi::Error::from_status(Status::from(status)));
    }
    // SAFETY: a live value of the current scope, just returned by Node-API.
    Err(napi::Error::from_unknown_without_coercion(unsafe { Unknown::from_raw_unchecked(env.raw(), thrown) }))
}

/// `typeof value`, with `null` told apart from objects; `Unknown` if the
/// engine cannot tell (then every caller refuses the value as mistyped).
pub fn type_of(env: &Env, value: Raw) -> ValueType {
    let mut kind = 0;
    // SAFETY: the Node-API contract (module documentation).
    if unsafe { sys::napi_typeof(env.raw(), value, &mut kind) } != sys::Status::napi_ok {
        return ValueType::Unknown;
    }
    ValueType::from(kind)
}

/// The name used in error messages for a value's type (`"null"`, `"array"`, `"number"`, …).
pub fn describe(env: &Env, value: Raw) -> String {
    match type_of(env, value) {
        ValueType::Object if is_array(env, value) => "array".into(),
        ValueType::Object => "object".into(),
        ValueType::Undefined => "undefined".into(),
        ValueType::Null => "null".into(),
        ValueType::Boolean => "boolean".into(),
        ValueType::Number => "number".into(),
        ValueType::String => "string".into(),
        ValueType::Symbol => "symbol".into(),
        ValueType::Function => "function".into(),
        ValueType::BigInt => "bigint".into(),
        _ => "unknown".into(),
    }
}

/// `Array.isArray(value)`; `false` if the engine cannot tell.
pub fn is_array(env: &Env, value: Raw) -> bool {
    let mut result = false;
    // SAFETY: the Node-API contract (module documentation).
    unsafe { sys::napi_is_array(env.raw(), value, &mut result) == sys::Status::napi_ok && result }
}

/// A JS number's value (one [`type_of`] called a number), by napi-rs.
pub fn number(env: &Env, value: Raw) -> Result<f64> {
    // SAFETY: the Node-API contract (module documentation); napi-rs checks the value's type and fails otherwise.
    unsafe { f64::from_napi_value(env.raw(), value) }
}

/// A JS boolean's value (one [`type_of`] called a boolean), by napi-rs.
pub fn boolean(env: &Env, value: Raw) -> Result<bool> {
    // SAFETY: the Node-API contract (module documentation); napi-rs checks the value's type and fails otherwise.
    unsafe { bool::from_napi_value(env.raw(), value) }
}

/// A copy of the bytes of a `Uint8Array` (a `Buffer` too); `None` for any
/// other value, other typed arrays included.
pub fn bytes(env: &Env, value: Raw) -> Option<Vec<u8>> {
    if !is_typed_array(env, value) {
        return None;
    }
    // SAFETY: the Node-API contract (module documentation); napi-rs checks the value's type and fails otherwise.
    let array = unsafe { Uint8Array::from_napi_value(env.raw(), value) }.ok()?;
    Some(array.to_vec())
}

/// Whether `value` is a typed array; `false` if the engine cannot tell.
pub fn is_typed_array(env: &Env, value: Raw) -> bool {
    let mut result = false;
    // SAFETY: the Node-API contract (module documentation).
    unsafe { sys::napi_is_typedarray(env.raw(), value, &mut result) == sys::Status::napi_ok && result }
}

/// The `length` of an array (one [`is_array`] accepted), by napi-rs.
pub fn array_length(env: &Env, array: Raw) -> Result<u32> {
    // SAFETY: the Node-API contract (module documentation); napi-rs fails for anything but an array.
    Ok(unsafe { Array::from_napi_value(env.raw(), array) }?.len())
}

/// Whether `value` is an object or function (something with properties).
pub fn is_object(env: &Env, value: Raw) -> bool {
    matches!(type_of(env, value), ValueType::Object | ValueType::Function)
}

/// `value[name]`, running getters and Proxy traps.
pub fn get(env: &Env, value: Raw, name: &'static str) -> Result<Raw> {
    get_key(env, value, name_key(env, name)?)
}

thread_local! {
    /// The JS strings of the property names the binding reads, made once per
    /// thread's environment (the thread's only one) and kept in a referenced
    /// array, by index: making and interning a name on every read was a
    /// large part of a collection's fixed cost. (A reference to a string
    /// itself needs Node-API 10.)
    static NAMES: RefCell<Names> = RefCell::new(Names { env: ptr::null_mut(), array: ptr::null_mut(), index: HashMap::new() });
}

struct Names {
    env: sys::napi_env,
    array: sys::napi_ref,
    index: HashMap<&'static str, u32>,
}

/// `name` as a JS string, from [`NAMES`]. The borrow is never held across a
/// call into the engine, and the array gets own data properties only, so
/// nothing on `Array.prototype` runs here.
fn name_key(env: &Env, name: &'static str) -> Result<Raw> {
    let kept = NAMES.with(|names| {
        let names = names.borrow();
        (names.env == env.raw()).then(|| (names.array, names.index.get(name).copied()))
    });
    let array = match kept {
        Some((array, Some(index))) => return element(env, dereference(env, array)?, index),
        Some((array, None)) => dereference(env, array)?,
        None => {
            // The first read in this thread's environment.
            let mut array = ptr::null_mut();
            // SAFETY: the Node-API contract (module documentation).
            check(env, unsafe { sys::napi_create_array(env.raw(), &mut array) })?;
            let reference = reference(env, array)?;
            NAMES.with(|names| *names.borrow_mut() = Names { env: env.raw(), array: reference, index: HashMap::new() });
            array
        }
    };
    let key = env.create_string(name)?.raw();
    let index = NAMES.with(|names| names.borrow().index.len() as u32);
    let descriptor = data_property(ptr::null(), env.create_string(index.to_string())?.raw(), key);
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_define_properties(env.raw(), array, 1, &descriptor) })?;
    NAMES.with(|names| names.borrow_mut().index.insert(name, index));
    Ok(key)
}

/// `value[key]` for a key that already is a JS value (one from [`own_keys`]),
/// so no string is made from Rust text for it.
pub fn get_key(env: &Env, value: Raw, key: Raw) -> Result<Raw> {
    let mut result = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_property(env.raw(), value, key, &mut result) })?;
    Ok(result)
}

/// `value[name]`, or `None` when `value` is not an object or the property is `undefined`.
pub fn get_defined(env: &Env, value: Raw, name: &'static str) -> Result<Option<Raw>> {
    if !is_object(env, value) {
        return Ok(None);
    }
    let property = get(env, value, name)?;
    Ok((type_of(env, property) != ValueType::Undefined).then_some(property))
}

/// An own enumerable property key.
pub enum Key {
    /// A string key (array indices come as their decimal strings).
    Name(String),
    /// A string key holding a lone surrogate: the U+FFFD-replaced form, for
    /// messages only, and what is wrong with it.
    IllFormed(String, IllFormedText),
    /// A symbol key, as `Symbol(description)` for messages.
    Symbol(String),
}

impl Key {
    /// The key as a message shows it.
    pub fn display(&self) -> &str {
        match self {
            Key::Name(name) | Key::IllFormed(name, _) | Key::Symbol(name) => name,
        }
    }
}

/// The enumerable string keys of `value` and of its prototype chain, as
/// `for…in` sees them: the fields a spec made with `Object.create(spec, …)`
/// has, its own and its prototype's.
pub fn enumerable_names(env: &Env, value: Raw) -> Result<Vec<String>> {
    let mut names = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe {
        sys::napi_get_all_property_names(
            env.raw(),
            value,
            sys::KeyCollectionMode::include_prototypes,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut names,
        )
    })?;
    let mut length = 0;
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_array_length(env.raw(), names, &mut length) })?;
    (0..length).map(|index| lossy_string(env, element(env, names, index)?)).collect()
}

/// Own enumerable keys: `Object.keys(value)`, plus the symbol keys when
/// `symbols` is set (so a caller can refuse them instead of not seeing them).
/// Each comes with the key itself as a JS value, for [`get_key`].
pub fn own_keys(env: &Env, value: Raw, symbols: bool) -> Result<Vec<(Raw, Key)>> {
    let mut names = ptr::null_mut();
    let filter =
        if symbols { sys::KeyFilter::enumerable } else { sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols };
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe {
        sys::napi_get_all_property_names(
            env.raw(),
            value,
            sys::KeyCollectionMode::own_only,
            filter,
            sys::KeyConversion::numbers_to_strings,
            &mut names,
        )
    })?;
    let mut length = 0;
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_array_length(env.raw(), names, &mut length) })?;
    let mut keys = Vec::with_capacity(length as usize);
    for index in 0..length {
        let key = element(env, names, index)?;
        keys.push((
            key,
            match type_of(env, key) {
                ValueType::Symbol => Key::Symbol(symbol_display(env, key)?),
                _ => match string(env, key)? {
                    Ok(name) => Key::Name(name),
                    Err(ill_formed) => Key::IllFormed(lossy_string(env, key)?, ill_formed),
                },
            },
        ));
    }
    Ok(keys)
}

/// `Symbol(description)`, read without calling any user code.
fn symbol_display(env: &Env, symbol: Raw) -> Result<String> {
    let description = get(env, symbol, "description")?;
    Ok(match type_of(env, description) {
        ValueType::String => format!("Symbol({})", lossy_string(env, description)?),
        _ => "Symbol()".into(),
    })
}

/// `array[index]`, running getters and Proxy traps.
pub fn element(env: &Env, array: Raw, index: u32) -> Result<Raw> {
    let mut item = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_element(env.raw(), array, index, &mut item) })?;
    Ok(item)
}

/// A JS string's contents, or what makes it ill-formed: a lone surrogate is
/// refused (see the core's `text` module), never silently turned into U+FFFD.
/// The outer error is a Node-API failure; callers report the inner one with
/// the field it was read from.
pub fn string(env: &Env, value: Raw) -> Result<std::result::Result<String, IllFormedText>> {
    let lossy = lossy_string(env, value)?;
    if !lossy.contains(char::REPLACEMENT_CHARACTER) {
        return Ok(Ok(lossy));
    }
    // That U+FFFD may be the caller's own or a replaced surrogate: decode the
    // UTF-16 itself (rare, so the common path stays one UTF-8 copy).
    let mut length = 0;
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_value_string_utf16(env.raw(), value, ptr::null_mut(), 0, &mut length) })?;
    let mut units = vec![0u16; length + 1];
    let mut written = 0;
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe {
        sys::napi_get_value_string_utf16(env.raw(), value, units.as_mut_ptr(), units.len(), &mut written)
    })?;
    units.truncate(written);
    Ok(text::from_utf16(&units))
}

/// A JS string's contents with lone surrogates replaced by U+FFFD: for
/// messages, never for values that are used.
pub fn lossy_string(env: &Env, value: Raw) -> Result<String> {
    // Most strings read here are short (names, values): one call into a stack
    // buffer, instead of asking for the length first.
    let mut buffer = [0u8; 256];
    let mut copied = 0;
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe {
        sys::napi_get_value_string_utf8(env.raw(), value, buffer.as_mut_ptr().cast(), buffer.len(), &mut copied)
    })?;
    // Node-API writes only complete UTF-8 sequences (up to 4 bytes each), so
    // a string cut short leaves at most 4 bytes of the buffer unused.
    if copied + 4 < buffer.len() - 1 {
        return Ok(utf8_or_lossy(buffer[..copied].to_vec()));
    }
    // Longer: the length in UTF-16 units costs nothing to ask, and each unit
    // takes at most 3 bytes of UTF-8, so one copy into room for that many
    // suffices (where asking for the UTF-8 length would encode it twice).
    // Past `ONE_COPY_UNITS` the room is not worth it.
    const ONE_COPY_UNITS: usize = 1 << 16;
    let mut units = 0;
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_value_string_utf16(env.raw(), value, ptr::null_mut(), 0, &mut units) })?;
    if units > ONE_COPY_UNITS {
        // SAFETY: the Node-API contract (module documentation); napi-rs checks the value's type and fails otherwise.
        return unsafe { String::from_napi_value(env.raw(), value) };
    }
    let mut bytes = Vec::<u8>::with_capacity(units * 3 + 1);
    // SAFETY: the Node-API contract (module documentation): Node-API writes at
    // most `capacity` bytes (a NUL included) and reports how many it wrote
    // before the NUL, which are then initialized.
    unsafe {
        check(
            env,
            sys::napi_get_value_string_utf8(env.raw(), value, bytes.as_mut_ptr().cast(), bytes.capacity(), &mut copied),
        )?;
        bytes.set_len(copied);
    }
    Ok(utf8_or_lossy(bytes))
}

/// `bytes` as text; V8 writes lone surrogates as U+FFFD already, so the
/// lossy conversion is only a guard.
fn utf8_or_lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// Whether `value` can be read as an options bag or a record of names: an
/// object whose `Object.prototype.toString` tag is `Object`. That takes plain
/// objects of any realm, null-prototype objects, class instances,
/// `process.env` and Proxies of those, frozen or not; it refuses arrays,
/// functions, `Map`, `Set`, `Date` and the other built-ins whose contents are
/// not their own properties (reading them would silently find nothing).
/// Running a `Symbol.toStringTag` getter or a Proxy trap can throw: that is
/// the `Err`, holding the thrown value.
pub fn is_options_object(env: &Env, value: Raw) -> Result<bool> {
    if type_of(env, value) != ValueType::Object || is_array(env, value) {
        return Ok(false);
    }
    let global = env.get_global()?.raw();
    let to_string = get(env, get(env, get(env, global, "Object")?, "prototype")?, "toString")?;
    let mut tag = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_call_function(env.raw(), value, to_string, 0, ptr::null(), &mut tag) })?;
    Ok(type_of(env, tag) == ValueType::String && lossy_string(env, tag)? == "[object Object]")
}

/// Whether `value` is a plain object: made by a literal or `Object.create(null)`.
/// Its prototype is `null` or an `Object.prototype` — of any realm, because
/// test runners such as Jest evaluate each file in its own context.
pub fn is_plain_object(env: &Env, value: Raw) -> Result<bool> {
    if type_of(env, value) != ValueType::Object || is_array(env, value) {
        return Ok(false);
    }
    let prototype = prototype_of(env, value)?;
    Ok(type_of(env, prototype) == ValueType::Null || type_of(env, prototype_of(env, prototype)?) == ValueType::Null)
}

fn prototype_of(env: &Env, value: Raw) -> Result<Raw> {
    let mut prototype = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_prototype(env.raw(), value, &mut prototype) })?;
    Ok(prototype)
}

/// Whether `value` is a native promise or any object with a callable `then`.
pub fn is_thenable(env: &Env, value: Raw) -> Result<bool> {
    if !is_object(env, value) {
        return Ok(false);
    }
    let then = get(env, value, "then")?;
    Ok(type_of(env, then) == ValueType::Function)
}

/// `Promise.resolve(value)`: a native promise for any thenable.
pub fn to_native_promise(env: &Env, value: Raw) -> Result<Raw> {
    let mut is_promise = false;
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_is_promise(env.raw(), value, &mut is_promise) })?;
    if is_promise {
        return Ok(value);
    }
    let promise_class = get(env, env.get_global()?.raw(), "Promise")?;
    call_method(env, promise_class, "resolve", &[value])
}

/// `a === b`; `false` if the engine cannot tell.
pub fn strict_equals(env: &Env, a: Raw, b: Raw) -> bool {
    let mut equal = false;
    // SAFETY: the Node-API contract (module documentation).
    unsafe { sys::napi_strict_equals(env.raw(), a, b, &mut equal) == sys::Status::napi_ok && equal }
}

/// `undefined`.
pub fn undefined(env: &Env) -> Result<Raw> {
    let mut undefined = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_undefined(env.raw(), &mut undefined) })?;
    Ok(undefined)
}

/// `function.call(undefined, ...args)`.
pub fn call(env: &Env, function: Raw, args: &[Raw]) -> Result<Raw> {
    let undefined = undefined(env)?;
    let mut result = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe {
        sys::napi_call_function(env.raw(), undefined, function, args.len(), args.as_ptr(), &mut result)
    })?;
    Ok(result)
}

/// `receiver[name](...args)`.
pub fn call_method(env: &Env, receiver: Raw, name: &'static str, args: &[Raw]) -> Result<Raw> {
    let method = get(env, receiver, name)?;
    let mut result = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe {
        sys::napi_call_function(env.raw(), receiver, method, args.len(), args.as_ptr(), &mut result)
    })?;
    Ok(result)
}

/// A strong reference to `value`, which keeps it alive until deleted.
pub fn reference(env: &Env, value: Raw) -> Result<sys::napi_ref> {
    let mut reference = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_create_reference(env.raw(), value, 1, &mut reference) })?;
    Ok(reference)
}

/// The value a strong [`reference`] holds.
pub fn dereference(env: &Env, reference: sys::napi_ref) -> Result<Raw> {
    let mut value = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_get_reference_value(env.raw(), reference, &mut value) })?;
    Ok(value)
}

/// Deletes a strong [`reference`]; `false` if the engine refused, which
/// leaves nothing to do (the value then goes with the `env`).
pub fn unreference(env: &Env, reference: sys::napi_ref) -> bool {
    // SAFETY: the Node-API contract (module documentation); the caller deletes
    // each reference once.
    unsafe { sys::napi_delete_reference(env.raw(), reference) == sys::Status::napi_ok }
}

/// `new Error(message)` with `error.code = code`, both JS strings.
pub fn error(env: &Env, code: Raw, message: Raw) -> Result<Raw> {
    let mut error = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_create_error(env.raw(), code, message, &mut error) })?;
    Ok(error)
}

/// A new array holding `items`, in order.
pub fn array_of(env: &Env, items: impl ExactSizeIterator<Item = Result<Raw>>) -> Result<Raw> {
    let mut array = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_create_array_with_length(env.raw(), items.len(), &mut array) })?;
    for (index, item) in items.enumerate() {
        // SAFETY: the Node-API contract (module documentation).
        check(env, unsafe { sys::napi_set_element(env.raw(), array, index as u32, item?) })?;
    }
    Ok(array)
}

/// `Object.freeze(value)`.
pub fn freeze(env: &Env, value: Raw) -> Result<()> {
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_object_freeze(env.raw(), value) })
}

/// A raw value handed back to napi-rs as a return value.
pub struct JsRaw(pub Raw);

impl ToNapiValue for JsRaw {
    unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
        Ok(value.0)
    }
}

/// `process` of the context the addon was loaded in: Node's own, also where
/// a test runner gives each test file a `process` of its own (Jest loads
/// addons with Node's `require`).
pub fn process(env: &Env) -> Result<Raw> {
    get(env, env.get_global()?.raw(), "process")
}

/// `process.env` of the calling thread (a worker's own copy inside a worker).
pub fn process_env(env: &Env) -> Result<Raw> {
    get(env, process(env)?, "env")
}

/// A string property of an environment-like object, read leniently: `None`
/// when it is absent, not a string, or not well-formed (such a value could not
/// come from a real environment and is treated as unset).
pub fn get_string(env: &Env, value: Raw, name: &'static str) -> Result<Option<String>> {
    match get_defined(env, value, name)? {
        Some(property) if type_of(env, property) == ValueType::String => Ok(string(env, property)?.ok()),
        _ => Ok(None),
    }
}

/// A new plain object with string properties, in the given order. Each is
/// defined as an own data property, so any name, `__proto__` included, is a
/// property like the others (assignment would call the `__proto__` setter of
/// `Object.prototype` and lose it). All are defined in one call: one Node-API
/// call per property was most of the cost of a `collect()` snapshot.
pub fn object_of_strings<'a>(env: &Env, entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Raw> {
    let mut object = ptr::null_mut();
    // SAFETY: the Node-API contract (module documentation).
    check_status!(unsafe { sys::napi_create_object(env.raw(), &mut object) })?;
    let mut names = Vec::new();
    let mut values = Vec::new();
    for (key, value) in entries {
        // Named by UTF-8 text, unless the name holds a NUL that would end it early.
        let name = match std::ffi::CString::new(key) {
            Ok(text) => Ok(text),
            Err(_) => Err(env.create_string(key)?.raw()),
        };
        names.push(name);
        values.push(env.create_string(value)?.raw());
    }
    let descriptors: Vec<sys::napi_property_descriptor> = names
        .iter()
        .zip(values)
        .map(|(name, value)| {
            let (utf8name, name) = match name {
                Ok(text) => (text.as_ptr(), ptr::null_mut()),
                Err(key) => (ptr::null(), *key),
            };
            data_property(utf8name, name, value)
        })
        .collect();
    if !descriptors.is_empty() {
        // SAFETY: the Node-API contract (module documentation).
        check(env, unsafe { sys::napi_define_properties(env.raw(), object, descriptors.len(), descriptors.as_ptr()) })?;
    }
    Ok(object)
}

/// An enumerable, writable and configurable data property, like an object literal's.
fn data_property(utf8name: *const std::ffi::c_char, name: Raw, value: Raw) -> sys::napi_property_descriptor {
    sys::napi_property_descriptor {
        utf8name,
        name,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable
            | sys::PropertyAttributes::enumerable
            | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    }
}

/// Defines `object[name] = value` as an own enumerable, writable and
/// configurable data property (like an object literal does) on an object the
/// binding created.
pub fn set(env: &Env, object: Raw, name: &str, value: Raw) -> Result<()> {
    let descriptor = data_property(ptr::null(), env.create_string(name)?.raw(), value);
    // SAFETY: the Node-API contract (module documentation).
    check(env, unsafe { sys::napi_define_properties(env.raw(), object, 1, &descriptor) })
}

/// A promise already settled with `outcome` (`Ok`: fulfilled, `Err`: rejected),
/// made on the JS thread without a round trip through the async runtime.
pub fn settled_promise(env: &Env, outcome: std::result::Result<Raw, Raw>) -> Result<Raw> {
    let (mut deferred, mut promise) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: the Node-API contract (module documentation).
    check_status!(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) })?;
    // SAFETY: the Node-API contract (module documentation).
    check_status!(unsafe {
        match outcome {
            Ok(value) => sys::napi_resolve_deferred(env.raw(), deferred, value),
            Err(reason) => sys::napi_reject_deferred(env.raw(), deferred, reason),
        }
    })?;
    Ok(promise)
}
