//! Calendar dates without a date library: enough to order documents by the date they
//! carry and to stamp new decisions (UTC).

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// Milliseconds since the epoch of a text starting `YYYY-MM-DD` (the rest, such as an
/// RFC 3339 time, is read to the second when present). `None` for anything else.
pub fn parse_ms(text: &str) -> Option<i64> {
    let t = text.trim();
    let num = |s: Option<&str>| {
        s.filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse::<i64>().ok())
    };
    let y = num(t.get(0..4))?;
    let m = num(t.get(5..7))?;
    let d = num(t.get(8..10))?;
    if t.as_bytes().get(4) != Some(&b'-') || t.as_bytes().get(7) != Some(&b'-') {
        return None;
    }
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) * MS_PER_DAY;
    // `THH:MM:SS` after the date; a zone offset is ignored (ordering only needs days).
    if matches!(t.as_bytes().get(10), Some(b'T' | b't' | b' '))
        && let (Some(h), Some(mi), Some(s)) =
            (num(t.get(11..13)), num(t.get(14..16)), num(t.get(17..19)))
    {
        ms += ((h * 60 + mi) * 60 + s) * 1000;
    }
    Some(ms)
}

/// `YYYY-MM-DD` of a time in milliseconds since the epoch (UTC).
pub fn format_date(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(MS_PER_DAY));
    format!("{y:04}-{m:02}-{d:02}")
}

/// RFC 3339 (`YYYY-MM-DDTHH:MM:SSZ`) of a time in milliseconds since the epoch.
pub fn format_rfc3339(ms: i64) -> String {
    let secs = ms.rem_euclid(MS_PER_DAY) / 1000;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        format_date(ms),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_order() {
        assert_eq!(parse_ms("1970-01-01"), Some(0));
        assert_eq!(parse_ms("2026-11-29"), Some(1_795_910_400_000));
        assert_eq!(format_date(1_795_910_400_000), "2026-11-29");
        assert_eq!(format_date(951_782_400_000), "2000-02-29");
        assert_eq!(
            format_rfc3339(1_795_910_400_000 + 3_723_000),
            "2026-11-29T01:02:03Z"
        );
        assert_eq!(
            parse_ms("2026-11-29T01:02:03Z"),
            Some(1_795_910_400_000 + 3_723_000)
        );
        assert!(parse_ms("2026-11-30").unwrap() > parse_ms("2026-11-29T23:59:59Z").unwrap());
        assert_eq!(parse_ms("yesterday"), None);
        assert_eq!(parse_ms("2026-13-01"), None);
        assert_eq!(parse_ms("2026/11/29"), None);
    }
}
