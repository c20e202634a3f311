//! Calendar days and instants, on `jiff` (already in the tree under
//! hnsw_rs's logger): a day is kept as the number `YYYYMMDD` (what the
//! index stores and range filters compare), an instant as Unix seconds.
//! Everything is UTC.

use jiff::civil::Date;
use jiff::Timestamp;

/// Now, in Unix seconds (0 before 1970).
pub fn now() -> i64 {
    Timestamp::now().as_second().max(0)
}

/// Parses `YYYY-MM-DD` (anything after the first 10 characters, such as a
/// time, is ignored) into `YYYYMMDD`; `None` unless it is a real day.
pub fn parse(text: &str) -> Option<u32> {
    let day = text.get(..10)?;
    let mut parts = day.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    if ![y, m, d]
        .iter()
        .all(|p| p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let (y, m, d): (i16, i8, i8) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    let date = Date::new(y, m, d).ok()?;
    Some(number(date))
}

/// `YYYYMMDD` as `YYYY-MM-DD`.
pub fn format(date: u32) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        date / 10_000,
        date / 100 % 100,
        date % 100
    )
}

fn number(date: Date) -> u32 {
    date.year() as u32 * 10_000 + date.month() as u32 * 100 + date.day() as u32
}

fn date_of(date: u32) -> Option<Date> {
    Date::new(
        i16::try_from(date / 10_000).ok()?,
        (date / 100 % 100) as i8,
        (date % 100) as i8,
    )
    .ok()
}

fn instant(at: u64) -> Timestamp {
    Timestamp::from_second(i64::try_from(at).unwrap_or(i64::MAX)).unwrap_or(Timestamp::MAX)
}

/// Midnight UTC of `YYYYMMDD`, in Unix seconds (0 for a day before 1970
/// or one that is not a day).
pub fn unix_of(date: u32) -> u64 {
    let epoch = Date::constant(1970, 1, 1);
    date_of(date)
        .and_then(|d| d.since(epoch).ok())
        .map_or(0, |span| i64::from(span.get_days()).max(0) as u64 * 86_400)
}

/// Days since 1970-01-01 as `YYYY-MM-DD` (Arrow's `Date32`), if the day is
/// within years -9999 to 9999.
pub fn from_days(days: i64) -> Option<String> {
    let span = jiff::Span::new().try_days(days).ok()?;
    let date = Date::constant(1970, 1, 1).checked_add(span).ok()?;
    Some(date.strftime("%Y-%m-%d").to_string())
}

/// The UTC day of Unix seconds, `YYYY-MM-DD`.
pub fn day_of(at: u64) -> String {
    instant(at).strftime("%Y-%m-%d").to_string()
}

/// RFC 822 as RSS wants it: `Fri, 04 Dec 2026 00:00:00 GMT`.
pub fn rfc822(at: u64) -> String {
    instant(at)
        .strftime("%a, %d %b %Y %H:%M:%S GMT")
        .to_string()
}

/// RFC 3339 as Atom wants it: `2026-12-04T00:00:00Z`.
pub fn rfc3339(at: u64) -> String {
    instant(at).strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_parse_only_when_real() {
        assert_eq!(parse("2024-02-29"), Some(20240229));
        assert_eq!(parse("2024-02-29T10:00:00Z"), Some(20240229));
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-00-10",
            "2024-1-01",
            "24-01-01",
            "2024-01-+1",
            "",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(format(20240229), "2024-02-29");
    }

    #[test]
    fn days_and_instants_round_trip() {
        assert_eq!(unix_of(19700101), 0);
        assert_eq!(unix_of(20261204), 1_796_342_400);
        assert_eq!(day_of(1_796_342_400 + 86_399), "2026-12-04");
        assert_eq!(day_of(unix_of(20240229)), "2024-02-29");
        assert_eq!(rfc822(1_796_342_400), "Fri, 04 Dec 2026 00:00:00 GMT");
        assert_eq!(rfc3339(1_796_342_400 + 3661), "2026-12-04T01:01:01Z");
        assert_eq!(from_days(0).as_deref(), Some("1970-01-01"));
        assert_eq!(from_days(19_875).as_deref(), Some("2024-06-01"));
        assert_eq!(from_days(-1).as_deref(), Some("1969-12-31"));
        assert_eq!(from_days(i64::MAX), None);
    }
}
