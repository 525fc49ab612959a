//! Python's `repr` of what a key is made of, as `str(key)` spells it: a
//! string's quotes and escapes, a float's shortest digits, a tuple's commas.
//! The one place the workspace spells them: [`Key`](crate::Key) and
//! [`Value`](crate::Value) print through it, and so do the readers of
//! Python's own objects.
//!
//! ```
//! use graph_core::repr;
//!
//! let mut text = String::new();
//! text.push('(');
//! repr::write_str(&mut text, "it's")?;
//! text.push_str(repr::ITEM_SEPARATOR);
//! repr::write_float(&mut text, 1e16)?;
//! text.push_str(repr::tuple_end(2));
//! assert_eq!(text, r#"("it's", 1e+16)"#);
//! # Ok::<(), std::fmt::Error>(())
//! ```

use std::fmt;

/// What stands between the items of a tuple.
pub const ITEM_SEPARATOR: &str = ", ";

/// What ends a tuple of `len` items: a one-item tuple keeps its comma,
/// `(1,)`.
pub fn tuple_end(len: usize) -> &'static str {
    if len == 1 { ",)" } else { ")" }
}

/// Writes a string as Python's `repr` does: single quotes unless the text
/// holds a single quote and no double quote, with backslash escapes.
pub fn write_str(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    // The common case, printable ASCII without a quote or a backslash, whole.
    if s.bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'\'' && b != b'\\')
    {
        f.write_char('\'')?;
        f.write_str(s)?;
        return f.write_char('\'');
    }
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    f.write_char(quote)?;
    for c in s.chars() {
        match c {
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c == quote => write!(f, "\\{c}")?,
            c if c.is_control() => match u32::from(c) {
                code @ 0..=0xff => write!(f, "\\x{code:02x}")?,
                code @ 0x100..=0xffff => write!(f, "\\u{code:04x}")?,
                code => write!(f, "\\U{code:08x}")?,
            },
            c => f.write_char(c)?,
        }
    }
    f.write_char(quote)
}

/// Writes a float as Python's `repr` does: the shortest text that reads back
/// to the same float, positional for exponents in `-4..16`, else scientific
/// (`1e+16`, `1.5e-05`), and always with a `.0` on a whole positional number.
pub fn write_float(f: &mut impl fmt::Write, x: f64) -> fmt::Result {
    if x.is_nan() {
        return f.write_str("nan");
    }
    if x.is_infinite() {
        return f.write_str(if x > 0.0 { "inf" } else { "-inf" });
    }
    // Positional for exponents in -4..16: Rust's `Display` gives the same
    // shortest round-trip digits, never in scientific form, with no `.0` on a
    // whole number.
    if x == 0.0 || (1e-4..1e16).contains(&x.abs()) {
        return if x.fract() == 0.0 {
            write!(f, "{x}.0")
        } else {
            write!(f, "{x}")
        };
    }
    write_float_from_digits(f, x)
}

/// [`write_float`] of a finite float from its shortest digits, for
/// every exponent.
pub(crate) fn write_float_from_digits(f: &mut impl fmt::Write, x: f64) -> fmt::Result {
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.2345e-7".
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` writes a decimal exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    f.write_str(sign)?;
    if (-4..16).contains(&exp) {
        if exp < 0 {
            f.write_str("0.")?;
            for _ in 0..(-exp - 1) {
                f.write_char('0')?;
            }
            f.write_str(&digits)
        } else {
            let point = exp as usize + 1;
            if digits.len() <= point {
                f.write_str(&digits)?;
                for _ in digits.len()..point {
                    f.write_char('0')?;
                }
                f.write_str(".0")
            } else {
                f.write_str(&digits[..point])?;
                f.write_char('.')?;
                f.write_str(&digits[point..])
            }
        }
    } else {
        f.write_str(mantissa)?;
        let exp_sign = if exp < 0 { '-' } else { '+' };
        write!(f, "e{exp_sign}{:02}", exp.abs())
    }
}
