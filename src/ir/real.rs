//! Reals in the IR's JSON: finite numbers as JSON numbers, infinities as the
//! strings `"inf"` and `"-inf"` (JSON has no infinity; NaN never links).

use serde::{Deserialize, Deserializer, Serializer, de};

/// Writes a real: a number, or `"inf"` / `"-inf"`.
pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else if *x == f64::INFINITY {
        s.serialize_str("inf")
    } else if *x == f64::NEG_INFINITY {
        s.serialize_str("-inf")
    } else {
        s.serialize_str("nan")
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RealText {
    Number(f64),
    Text(String),
}

/// Reads a real written by [`serialize`].
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    match RealText::deserialize(d)? {
        RealText::Number(x) => Ok(x),
        RealText::Text(t) => match t.as_str() {
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            other => Err(de::Error::custom(format!(
                "expected a number, \"inf\" or \"-inf\", found \"{other}\""
            ))),
        },
    }
}
