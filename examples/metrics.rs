//! Writes `tools/metrics.json`: the size of the language and of the IR (the
//! number of keywords, of IR `Stmt` and `Expr` variants, the IR version),
//! and prints the same JSON on stdout.
//!
//! ```sh
//! cargo run --example metrics
//! ```
//!
//! `tests/metrics.rs` fails when the checked-in file differs from what
//! this program computes now, so a keyword or an IR variant added without
//! rerunning it is caught.
//!
//! Architecture invariant: the counts come from the library itself (the
//! lexer's `KEYWORDS`, and the variant lists serde's derived `Deserialize`
//! hands to a deserializer), never from a hand-kept number.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::cell::Cell;

/// The JSON of `tools/metrics.json`, with a final newline.
pub fn metrics_json() -> String {
    let metrics = serde_json::json!({
        "keywords": serq::syntax::KEYWORDS.len(),
        "stmt_variants": variant_names::<serq::ir::Stmt>().len(),
        "expr_variants": variant_names::<serq::ir::Expr>().len(),
        "ir_version": serq::ir::IR_VERSION,
    });
    // A `Value` of plain numbers serialises; it cannot fail.
    let mut text = serde_json::to_string_pretty(&metrics).expect("metrics serialise");
    text.push('\n');
    text
}

/// The variant names of an enum, as its derived `Deserialize` lists them
/// (every variant not marked `#[serde(skip)]`).
pub fn variant_names<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let seen = Cell::new(None);
    // The capture always fails after recording the list: there is no value.
    let _ = T::deserialize(VariantCapture { seen: &seen });
    seen.get()
        .expect("the type is an externally tagged enum (its Deserialize calls deserialize_enum)")
}

/// A deserializer that only records the variant list an enum asks for.
struct VariantCapture<'a> {
    seen: &'a Cell<Option<&'static [&'static str]>>,
}

impl<'de> Deserializer<'de> for VariantCapture<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not an enum"))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.seen.set(Some(variants));
        Err(de::Error::custom("variants recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

fn main() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/metrics.json");
    let json = metrics_json();
    if let Err(e) = std::fs::write(&path, &json) {
        eprintln!("error: cannot write `{}`: {e}", path.display());
        std::process::exit(1);
    }
    print!("{json}");
    eprintln!("wrote {}", path.display());
}
