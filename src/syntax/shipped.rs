//! The libraries serq ships, reached by `use <name>;` (an extension: the
//! reference resolves no such path). Their text is built into the binary,
//! so a program reaches them from any folder, and from Python, without a
//! copy beside it.
//!
//! Architecture invariant: a shipped library is ordinary serq text (only
//! `def`s), spliced and checked as a `use "file"` library is; nothing here
//! adds to the IR, so a program that names no shipped library links as it
//! did before they existed.

/// Every shipped library: its name (as written between `<` and `>`) and
/// its text.
const LIBRARIES: &[(&str, &str)] = &[("roofline", include_str!("shipped/roofline.sq"))];

/// The shipped library `name`, as (its name, its text).
pub fn find(name: &str) -> Option<(&'static str, &'static str)> {
    LIBRARIES.iter().copied().find(|(n, _)| *n == name)
}

/// The names of the shipped libraries, for messages and did-you-means.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    LIBRARIES.iter().map(|(n, _)| *n)
}
