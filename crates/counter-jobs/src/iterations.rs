//! `kernel_iteration_range`: which launches of each selected kernel are
//! profiled, counted from 1 per kernel in the order the SDK sees them.
//!
//! The grammar is rocprofv3's (rocprofiler-sdk-tool config.cpp
//! `get_kernel_filter_range`): the text is cut at `[`, `]`, `,` and spaces,
//! and each piece is an integer `N` or an inclusive range `A-B`; several
//! strings (a job file's list) make one set. Where rocprofv3 is lenient
//! this is stricter, because each case would profile nothing the user can
//! see: `0` (iterations count from 1) and `A-B` with `A > B` are refused.
//! A text with no piece at all (`""`, `"[]"`) is no range: every launch.
use std::fmt;

/// The launches a kernel filter keeps: sorted, disjoint, inclusive ranges,
/// at least one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IterationRange(Vec<(u64, u64)>);

fn number(piece: &str, whole: &str) -> Result<u64, String> {
    let n: u64 = piece.trim().parse().map_err(|_| {
        format!("{whole:?}: {piece:?} is not an iteration number; expected integers and ranges A-B, such as \"[1-3, 7]\"")
    })?;
    if n == 0 {
        return Err(format!(
            "{whole:?}: iteration 0 never runs; a kernel's launches count from 1"
        ));
    }
    Ok(n)
}

impl IterationRange {
    /// The set the texts name together; `Ok(None)` when they name no
    /// iteration (every launch is kept).
    pub fn parse<'a>(texts: impl IntoIterator<Item = &'a str>) -> Result<Option<Self>, String> {
        let mut ranges = Vec::new();
        for text in texts {
            let pieces = text
                .split(['[', ']', ',', ' '])
                .filter(|p| !p.trim().is_empty());
            for piece in pieces {
                let range = match piece.split_once('-') {
                    Some((a, b)) => {
                        let (a, b) = (number(a, text)?, number(b, text)?);
                        if a > b {
                            return Err(format!(
                                "{text:?}: the range {piece:?} ends before it starts"
                            ));
                        }
                        (a, b)
                    }
                    None => {
                        let n = number(piece, text)?;
                        (n, n)
                    }
                };
                ranges.push(range);
            }
        }
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (a, b) in ranges {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        Ok((!merged.is_empty()).then_some(IterationRange(merged)))
    }

    /// Is launch `n` (from 1) of a kernel kept?
    pub fn contains(&self, n: u64) -> bool {
        let at = self.0.partition_point(|&(_, end)| end < n);
        self.0.get(at).is_some_and(|&(start, _)| start <= n)
    }
}

/// `[1-3,7]`: rocprofv3's grammar, so it parses back to the same set.
impl fmt::Display for IterationRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, &(a, b)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if a == b {
                write!(f, "{a}")?;
            } else {
                write!(f, "{a}-{b}")?;
            }
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(texts: &[&str]) -> Result<Option<IterationRange>, String> {
        IterationRange::parse(texts.iter().copied())
    }

    #[test]
    fn pieces_of_every_text_make_one_merged_set() {
        let r = parse(&["[5-7, 2]", "[3]", "9"]).unwrap().unwrap();
        assert_eq!(r.to_string(), "[2-3,5-7,9]");
        let kept: Vec<u64> = (1..=10).filter(|&n| r.contains(n)).collect();
        assert_eq!(kept, vec![2, 3, 5, 6, 7, 9]);
        assert_eq!(parse(&[&r.to_string()]).unwrap().unwrap(), r, "round trip");
        assert_eq!(
            parse(&["[1-2]", "[2-4]"]).unwrap().unwrap().to_string(),
            "[1-4]"
        );
    }

    #[test]
    fn no_piece_is_no_range() {
        assert_eq!(parse(&[]).unwrap(), None);
        assert_eq!(parse(&["", "[]", " [ ] "]).unwrap(), None);
    }

    #[test]
    fn bad_pieces_are_refused_naming_the_text() {
        for (text, why) in [
            ("[1-x]", "\"x\" is not an iteration number"),
            ("[a]", "\"a\" is not an iteration number"),
            ("[1-2-3]", "\"2-3\" is not an iteration number"),
            ("[0-2]", "iteration 0 never runs"),
            ("[4-2]", "the range \"4-2\" ends before it starts"),
            ("[-3]", "\"\" is not an iteration number"),
        ] {
            let err = parse(&[text]).unwrap_err();
            assert!(err.starts_with(&format!("{text:?}: ")), "{err}");
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn huge_ranges_cost_two_numbers() {
        let r = parse(&["[3-18446744073709551615]"]).unwrap().unwrap();
        assert!(!r.contains(2));
        assert!(r.contains(3) && r.contains(u64::MAX));
    }
}
