//! The did-you-mean distance: which of some known names a misspelt one
//! is close to (the linker's unknown names, `use <name>;`'s libraries).
//!
//! Architecture invariant: pure functions over strings.

/// Edit distance between two names (Levenshtein, by characters).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The closest of `candidates` to `name`, if it is close enough to be a typo.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    let limit = (len / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        // The distance is at least the difference in length: skip without
        // computing it (a 100 MB name would take O(n·m) time per candidate).
        if len.abs_diff(c.chars().count()) > limit {
            continue;
        }
        let d = distance(name, c);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}
