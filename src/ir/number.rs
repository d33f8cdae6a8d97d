//! A number as a person reads it in a message or a report's header.
//!
//! Architecture invariant: only the printing of numbers in prose; the
//! reports' figures and the sweep rows keep their own formats.

/// Plain digits above this run to more characters than a person counts:
/// `1e300` printed in full is 301 digits.
const PLAIN_BELOW: f64 = 1e15;

/// `x` in Rust's shortest round-trip form (`2`, `0.5`, `20000`), in
/// exponent form from 10^15 up (`1e300`, `-2.5e20`), `inf` or `-inf`
/// when infinite.
pub fn shown(x: f64) -> String {
    if x == f64::INFINITY {
        "inf".into()
    } else if x == f64::NEG_INFINITY {
        "-inf".into()
    } else if x.abs() >= PLAIN_BELOW {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_huge_number_is_shown_in_exponent_form_and_an_ordinary_one_plainly() {
        assert_eq!(shown(1e300), "1e300");
        assert_eq!(shown(-2.5e20), "-2.5e20");
        assert_eq!(shown(1e15), "1e15");
        assert_eq!(shown(999_999_999_999_999.0), "999999999999999");
        assert_eq!(shown(20000.0), "20000");
        assert_eq!(shown(0.5), "0.5");
        assert_eq!(shown(f64::INFINITY), "inf");
        assert_eq!(shown(f64::NAN), "NaN");
    }
}
