//! A literal that every match of a pattern contains, and a scan for it
//! that Cranelift compiles to a tight loop.
//!
//! `grep-regex` finds a pattern's literal with `memchr`'s `memmem`, whose
//! `simd128` loop checks its candidates inside the loop. Compiled by
//! Cranelift, that loop keeps its two needle vectors and the memory base in
//! stack slots and reloads them on every 16 bytes, so in the sandbox it ran
//! at about a quarter of the speed of `memchr`'s one-byte loop over the
//! same files (`perf annotate` of a `grep` for `[A-Z][a-z]+Queue\b`).
//! `candidate` is the same packed-pair test, in a function of its own that
//! leaves each candidate's check to its caller ([`Required::is_in`]), and
//! it takes 64 bytes a turn: Cranelift still reloads the two vectors from
//! the stack, and checks the epoch and the bounds, but once per four
//! vectors instead of once per vector (at 16 bytes a turn the scan was no
//! faster than `memmem`'s). A text file that does not contain the literal
//! holds no match and is not searched further.
//!
//! Natively [`Required::is_in`] is a `memchr::memmem::Finder`, with the
//! same answers; `candidate` is compiled everywhere, so the unit tests
//! run its logic, with the lanes done one by one where there is no
//! `simd128`.

use memchr::arch::all::packedpair::Pair;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind};

/// A literal of at least two bytes that every match contains.
#[derive(Debug)]
pub struct Required {
    needle: Vec<u8>,
    /// The needle's two rarest bytes, as `memchr` picks them.
    pair: Bytes,
    /// The portable search, made once.
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    finder: memchr::memmem::Finder<'static>,
}

impl Required {
    /// The longest literal every match of `pattern` (read as `grep` reads
    /// it) contains: the one it starts with, the one it ends with, or one
    /// in between. `None` when there is none, or only a set of them
    /// (`ignore_case` gives one per case), or it is shorter than two bytes,
    /// or the pattern does not parse here: the search is then done without
    /// this check.
    ///
    /// A prefix (suffix) sequence the extractor calls finite holds a literal
    /// that starts (ends) every match; look-arounds count as empty there, so
    /// `\bQueue\b` gives `Queue`. A match of a concatenation is the pieces'
    /// matches one after the other, so it holds each piece that is a
    /// literal: `_handler_` in `fn [a-z]+_handler_\d+\(`. `grep-regex` may
    /// narrow the pattern further (no `\n` in classes), never widen it.
    pub fn of(pattern: &str, fixed_strings: bool, ignore_case: bool) -> Option<Required> {
        let escaped;
        let pattern = if fixed_strings {
            escaped = regex_syntax::escape(pattern);
            &escaped
        } else {
            pattern
        };
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(ignore_case)
            .build()
            .parse(pattern)
            .ok()?;
        let ends = [ExtractKind::Prefix, ExtractKind::Suffix]
            .into_iter()
            .filter_map(
                |kind| match Extractor::new().kind(kind).extract(&hir).literals() {
                    Some([only]) => Some(only.as_bytes().to_vec()),
                    _ => None,
                },
            );
        let pieces = match ungrouped(&hir).kind() {
            HirKind::Concat(pieces) => pieces.as_slice(),
            _ => &[],
        };
        let inner = pieces
            .iter()
            .filter_map(|piece| match ungrouped(piece).kind() {
                HirKind::Literal(literal) => Some(literal.0.to_vec()),
                _ => None,
            });
        ends.chain(inner)
            .max_by_key(Vec::len)
            .and_then(Required::new)
    }

    /// `None` if `needle` is shorter than two bytes.
    fn new(needle: Vec<u8>) -> Option<Required> {
        Some(Required {
            pair: Bytes::of(&needle)?,
            #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
            finder: memchr::memmem::Finder::new(&needle).into_owned(),
            needle,
        })
    }

    /// Whether `haystack` contains the literal.
    pub fn is_in(&self, haystack: &[u8]) -> bool {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        return self.find(haystack).is_some();
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        return self.finder.find(haystack).is_some();
    }

    /// Where the literal first starts in `haystack`, by [`candidate`].
    #[cfg_attr(
        not(any(test, all(target_arch = "wasm32", target_feature = "simd128"))),
        allow(dead_code)
    )]
    fn find(&self, haystack: &[u8]) -> Option<usize> {
        let last = haystack.len().checked_sub(self.needle.len())?;
        let mut from = 0;
        while let Some(at) = candidate(haystack, from, last, &self.pair) {
            if haystack[at..at + self.needle.len()] == self.needle[..] {
                return Some(at);
            }
            from = at + 1;
        }
        None
    }
}

/// `hir` without the capture groups around it: a group matches what its
/// contents match.
fn ungrouped(mut hir: &Hir) -> &Hir {
    while let HirKind::Capture(group) = hir.kind() {
        hir = &group.sub;
    }
    hir
}

/// Two bytes of the needle and their offsets in it.
#[derive(Debug)]
struct Bytes {
    index1: usize,
    index2: usize,
    byte1: u8,
    byte2: u8,
}

impl Bytes {
    /// `None` if `needle` is shorter than two bytes.
    fn of(needle: &[u8]) -> Option<Bytes> {
        let pair = Pair::new(needle)?;
        let (index1, index2) = (usize::from(pair.index1()), usize::from(pair.index2()));
        Some(Bytes {
            index1,
            index2,
            byte1: needle[index1],
            byte2: needle[index2],
        })
    }
}

/// The first start `at` in `from..=last` with `pair.byte1` at `at +
/// pair.index1` and `pair.byte2` at `at + pair.index2`. Both offsets are
/// below the needle's length and `last` is the last start a needle fits at,
/// so every byte read is in `haystack`. No call is made inside its loop,
/// which takes [`BLOCK`] starts a turn: see the module's comment.
#[inline(never)]
fn candidate(haystack: &[u8], from: usize, last: usize, pair: &Bytes) -> Option<usize> {
    let lanes = Lanes::new(pair.byte1, pair.byte2);
    // The `BLOCK` starts from `start`, the bits below `skip` cleared.
    let block = |start: usize, skip: usize| {
        let first = haystack[start + pair.index1..].first_chunk::<BLOCK>()?;
        let second = haystack[start + pair.index2..].first_chunk::<BLOCK>()?;
        let mask = lanes.block(first, second) >> skip << skip;
        (mask != 0).then(|| start + mask.trailing_zeros() as usize)
    };
    let mut at = from;
    while at <= last && last - at >= BLOCK - 1 {
        if let Some(found) = block(at, 0) {
            return Some(found);
        }
        at += BLOCK;
    }
    if at > last {
        None
    } else if last >= BLOCK - 1 {
        // The last block, overlapping the one before; what it saw is skipped.
        let start = last + 1 - BLOCK;
        block(start, at - start)
    } else {
        (at..=last).find(|&at| {
            haystack[at + pair.index1] == pair.byte1 && haystack[at + pair.index2] == pair.byte2
        })
    }
}

/// How many starts [`Lanes::block`] tests at once.
const BLOCK: usize = 64;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
struct Lanes {
    byte1: core::arch::wasm32::v128,
    byte2: core::arch::wasm32::v128,
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl Lanes {
    fn new(byte1: u8, byte2: u8) -> Lanes {
        use core::arch::wasm32::u8x16_splat;
        Lanes {
            byte1: u8x16_splat(byte1),
            byte2: u8x16_splat(byte2),
        }
    }

    /// Bit `i` is set where `first[i]` is the first byte and `second[i]` the
    /// second: four vectors of sixteen.
    #[inline(always)]
    fn block(&self, first: &[u8; BLOCK], second: &[u8; BLOCK]) -> u64 {
        use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, v128, v128_and, v128_load};
        let mut mask = 0;
        for i in 0..BLOCK / 16 {
            // SAFETY: both arrays are `BLOCK` bytes long, so 16 bytes from
            // `16 * i` are in them; wasm's loads take any alignment.
            #[allow(unsafe_code)]
            let (a, b) = unsafe {
                (
                    v128_load(first.as_ptr().add(16 * i).cast::<v128>()),
                    v128_load(second.as_ptr().add(16 * i).cast::<v128>()),
                )
            };
            let both = v128_and(u8x16_eq(a, self.byte1), u8x16_eq(b, self.byte2));
            mask |= u64::from(u8x16_bitmask(both)) << (16 * i);
        }
        mask
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
struct Lanes {
    byte1: u8,
    byte2: u8,
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
impl Lanes {
    fn new(byte1: u8, byte2: u8) -> Lanes {
        Lanes { byte1, byte2 }
    }

    /// Bit `i` is set where `first[i]` is the first byte and `second[i]` the
    /// second: the lanes one by one.
    fn block(&self, first: &[u8; BLOCK], second: &[u8; BLOCK]) -> u64 {
        (0..BLOCK)
            .filter(|&i| first[i] == self.byte1 && second[i] == self.byte2)
            .fold(0, |mask, i| mask | 1 << i)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn needle(pattern: &str) -> Option<String> {
        Required::of(pattern, false, false).map(|r| String::from_utf8(r.needle).unwrap())
    }

    #[test]
    fn the_literal_every_match_holds() {
        assert_eq!(
            needle("TODO: yield the zone").as_deref(),
            Some("TODO: yield the zone")
        );
        assert_eq!(needle(r"[A-Z][a-z]+Queue\b").as_deref(), Some("Queue"));
        assert_eq!(needle(r"\bfn main\(").as_deref(), Some("fn main("));
        // A literal piece of the concatenation, the longest.
        assert_eq!(
            needle(r"fn [a-z]+_handler_\d+\(").as_deref(),
            Some("_handler_")
        );
        assert_eq!(needle(r"(x[0-9]+(?:abc)[0-9]+y)").as_deref(), Some("abc"));
        assert_eq!(needle(r"\.*Queue\.*").as_deref(), Some("Queue"));
        assert_eq!(needle(r"\d+(abcd)?\d+ab\w").as_deref(), Some("ab"));
        // The longer of a prefix and a suffix.
        assert_eq!(needle(r"ab[a-z]+wxyz").as_deref(), Some("wxyz"));
        // Every match of `a+b` ends with `ab`, though it may start `aa`.
        assert_eq!(needle("a+b").as_deref(), Some("ab"));
        assert_eq!(
            Required::of("a.b(c", true, false).map(|r| r.needle),
            Some(b"a.b(c".to_vec())
        );
        // None where matches share no literal, or only one byte, or several.
        for pattern in [
            r"[a-z]+_?\d+",
            "Queue|Stack",
            "(Queue)?",
            "x",
            "[a-z]+",
            "fn (",
        ] {
            assert_eq!(needle(pattern), None, "{pattern}");
        }
        assert!(Required::of("Queue", false, true).is_none());
        assert!(Required::of("Queue", true, true).is_none());
    }

    /// A small deterministic generator, so a failure can be replayed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn finds_what_memmem_finds() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let alphabet = b"abQueu";
        for round in 0..20_000 {
            let needle: Vec<u8> = (0..2 + rng.below(6))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let haystack: Vec<u8> = (0..rng.below(300))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let required = Required::new(needle.clone()).unwrap();
            let want = memchr::memmem::find(&haystack, &needle);
            assert_eq!(
                required.find(&haystack),
                want,
                "round {round}: {needle:?} in {haystack:?}"
            );
            assert_eq!(required.is_in(&haystack), want.is_some());
        }
    }

    #[test]
    fn at_every_place_around_the_lanes() {
        let needle = b"Queue";
        let required = Required::new(needle.to_vec()).unwrap();
        for len in needle.len()..200 {
            for at in 0..=len - needle.len() {
                let mut haystack = vec![b'.'; len];
                haystack[at..at + needle.len()].copy_from_slice(needle);
                assert_eq!(required.find(&haystack), Some(at), "len {len} at {at}");
                // A near miss before it is passed over.
                if at >= 2 {
                    haystack[at - 2..at].copy_from_slice(b"Qu");
                    assert_eq!(required.find(&haystack), Some(at), "len {len} at {at}");
                }
                haystack[at + needle.len() - 1] = b'.';
                assert_eq!(required.find(&haystack), None, "len {len} at {at}");
            }
        }
        assert_eq!(required.find(b""), None);
        assert_eq!(required.find(b"Queu"), None);
    }
}
