//! The Azure trace's `TIMESTAMP`: `YYYY-MM-DD HH:MM:SS[.f…]` (the 2023
//! files write seven decimals), read exactly into nanoseconds since
//! 1970-01-01 00:00:00, so that two rows' difference loses no digit (as
//! seconds since 1970 in an f64, a 2023 time keeps only about 0.2 µs).
//!
//! Architecture invariant: a pure function of the text; no time zone
//! (the files give none: every row is read in one, so differences hold).

/// Nanoseconds since 1970-01-01 00:00:00 of `text`, or why it is not a
/// datetime of that form.
pub fn parse_nanos(text: &str) -> Result<i64, String> {
    let bad = || format!("`{text}` is not a datetime `YYYY-MM-DD HH:MM:SS[.fraction]`");
    let b = text.as_bytes();
    // YYYY-MM-DD HH:MM:SS is 19 bytes; a fraction follows a dot.
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b' ' || b[10] == b'T') {
        return Err(bad());
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let digits = |r: std::ops::Range<usize>| -> Result<i64, String> {
        let s = &b[r];
        if s.iter().all(u8::is_ascii_digit) {
            Ok(s.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
        } else {
            Err(bad())
        }
    };
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let mut nanos = 0i64;
    if b.len() > 19 {
        let fraction = &b[20..];
        if b[19] != b'.' || fraction.is_empty() || fraction.len() > 9 {
            return Err(bad());
        }
        nanos = digits(20..b.len())? * 10i64.pow(9 - fraction.len() as u32);
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month)
        || day < 1
        || day > month_days[(month - 1) as usize]
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(format!("`{text}` is not a valid date and time"));
    }
    let days = days_from_civil(year, month, day);
    Ok(((days * 24 + hour) * 60 + minute) * 60_000_000_000 + second * 1_000_000_000 + nanos)
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (Howard
/// Hinnant's `days_from_civil`, public domain: eras of 400 years of 146097
/// days each, the year starting in March so that the leap day comes last).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_and_known_days_have_their_day_numbers() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        // 2000-03-01 is 11017 days after the epoch (30 years of 365 days,
        // 7 leap days 1972..1996, plus 31 + 29 days of 2000).
        assert_eq!(days_from_civil(2000, 3, 1), 30 * 365 + 7 + 31 + 29);
        // 2023-11-16: 19677 (date -d 2023-11-16 +%s = 1700092800 = 19677 × 86400).
        assert_eq!(days_from_civil(2023, 11, 16), 19_677);
    }

    #[test]
    fn an_azure_timestamp_reads_to_the_nanosecond() {
        // The Azure conversation trace's first row.
        let t = parse_nanos("2023-11-16 18:15:46.6805900").unwrap();
        let expected = (19_677 * 86_400 + 18 * 3600 + 15 * 60 + 46) * 1_000_000_000 + 680_590_000;
        assert_eq!(t, expected);
        // Across midnight and a month's end: 1 s apart.
        let a = parse_nanos("2024-02-29 23:59:59.5").unwrap();
        let b = parse_nanos("2024-03-01 00:00:00.5").unwrap();
        assert_eq!(b - a, 1_000_000_000);
        assert_eq!(
            parse_nanos("2023-11-16 18:15:46").unwrap() % 1_000_000_000,
            0
        );
    }

    #[test]
    fn a_malformed_timestamp_is_refused_with_its_text() {
        for bad in [
            "",
            "2023-11-16",
            "2023/11/16 18:15:46.1",
            "2023-11-16 18:15:4x.1",
            "2023-11-16 18:15:46.",
            "2023-11-16 18:15:46,5",
            "2023-11-16 18:15:46.1234567890",
        ] {
            let e = parse_nanos(bad).unwrap_err();
            assert!(e.contains("is not a datetime"), "{bad}: {e}");
        }
        assert!(
            parse_nanos("2023-02-29 00:00:00")
                .unwrap_err()
                .contains("not a valid")
        );
        assert!(
            parse_nanos("2023-13-01 00:00:00")
                .unwrap_err()
                .contains("not a valid")
        );
    }
}
