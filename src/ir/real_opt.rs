//! An optional real in the IR's JSON: absent or `null` is `None`, otherwise
//! a real as [`super::real`] writes it.

use serde::{Deserialize, Deserializer, Serializer};

/// Writes `Some(x)` as a real (`None` fields are skipped by the caller).
pub fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => super::real::serialize(x, s),
        None => s.serialize_none(),
    }
}

#[derive(Deserialize)]
struct Real(#[serde(with = "super::real")] f64);

/// Reads `null` as `None`, a real as `Some`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Option::<Real>::deserialize(d)?.map(|r| r.0))
}
