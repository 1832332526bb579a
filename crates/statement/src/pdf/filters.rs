//! A PDF stream's filters (`/FlateDecode`, `/LZWDecode`, `/ASCII85Decode` and the PNG
//! predictors of `/DecodeParms`), decoded as lopdf decodes them but never beyond a bound: a
//! stream that would expand past it is refused while it expands, so a kilobyte that unpacks
//! to a gigabyte costs a bounded amount of memory and time. Whatever lopdf cannot decode (a
//! filter it lacks, a predictor's rows that do not fit) it keeps as it is, and so does this.

use std::io::{Read, Write};

/// Which filters a stream's dictionary asks for, and the parameters that change their output,
/// read as lopdf reads them: `/Filter` a name or an array of names, `/DecodeParms` a
/// dictionary (an array of them is ignored, as lopdf ignores it).
#[derive(Clone, Debug)]
pub(super) struct Filters {
    pub(super) names: Vec<Vec<u8>>,
    pub(super) predictor: Option<Predictor>,
    /// LZW's `/EarlyChange`, 1 unless a dictionary says 0.
    pub(super) early_change: bool,
}

/// Reads one integer of `/DecodeParms` by its key.
pub(super) type Parameter<'a> = &'a dyn Fn(&[u8]) -> Option<i64>;

impl Filters {
    /// The filters named, with the parameters of `/DecodeParms` when it is a dictionary
    /// (`params` reads one of its integers).
    pub(super) fn new(names: Vec<Vec<u8>>, params: Option<Parameter<'_>>) -> Self {
        let number = |key: &[u8]| params.and_then(|p| p(key));
        Self {
            names,
            predictor: params.and_then(|_| {
                Predictor::of(
                    number(b"Predictor"),
                    number(b"Columns"),
                    number(b"Colors"),
                    number(b"BitsPerComponent"),
                )
            }),
            early_change: number(b"EarlyChange").is_none_or(|v| v != 0),
        }
    }
}

/// A PNG predictor's row geometry, as lopdf computes it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Predictor {
    pub(super) bytes_per_pixel: usize,
    pub(super) pixels_per_row: usize,
    /// The bytes of a row, computed without overflow: lopdf allocates two of them.
    pub(super) row: u128,
}

impl Predictor {
    /// From `/Predictor`, `/Columns`, `/Colors` and `/BitsPerComponent` (integers only, as
    /// lopdf reads them); `None` unless the predictor is a PNG one (10 to 15).
    pub(super) fn of(
        predictor: Option<i64>,
        columns: Option<i64>,
        colors: Option<i64>,
        bits: Option<i64>,
    ) -> Option<Self> {
        if !(10..=15).contains(&predictor.unwrap_or(1)) {
            return None;
        }
        let pixels = columns.unwrap_or(1).max(1);
        let colors = colors.unwrap_or(1).max(1);
        let bits = bits.unwrap_or(8).max(8);
        let row = u128::from(colors.unsigned_abs()) * u128::from(bits.unsigned_abs()) / 8
            * u128::from(pixels.unsigned_abs());
        // lopdf's own arithmetic, which wraps where this would overflow.
        let bytes_per_pixel = (colors as usize).wrapping_mul(bits as usize) / 8;
        Some(Self { bytes_per_pixel, pixels_per_row: pixels as usize, row })
    }
}

/// What decoding a stream gives.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Decoded {
    Bytes(Vec<u8>),
    /// lopdf cannot decode it and keeps the stream's bytes as they are.
    AsIs,
}

/// The stream expands past the bound.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct TooLarge;

/// Decodes `data` through the filters in order, refusing as soon as any step's output passes
/// `bound` bytes (lopdf holds every step's output whole).
pub(super) fn decode(data: &[u8], filters: &Filters, bound: usize) -> Result<Decoded, TooLarge> {
    if filters.names.is_empty() {
        // `/Filter []`: lopdf's answer is empty.
        return Ok(Decoded::Bytes(Vec::new()));
    }
    let mut current: Option<Vec<u8>> = None;
    for name in &filters.names {
        let input = current.as_deref().unwrap_or(data);
        let step = match name.as_slice() {
            b"FlateDecode" => predict(inflate(input, bound)?, filters, bound)?,
            b"LZWDecode" => predict(unlzw(input, filters.early_change, bound)?, filters, bound)?,
            b"ASCII85Decode" => ascii85(input, bound)?,
            _ => None,
        };
        match step {
            Some(bytes) => current = Some(bytes),
            None => return Ok(Decoded::AsIs),
        }
    }
    Ok(Decoded::Bytes(current.unwrap_or_default()))
}

/// A zlib stream's bytes up to its end or its first error (lopdf keeps what came before an
/// error), or `TooLarge`.
fn inflate(input: &[u8], bound: usize) -> Result<Vec<u8>, TooLarge> {
    let mut output = Vec::new();
    if !input.is_empty() {
        let mut decoder = flate2::read::ZlibDecoder::new(input).take(bound as u64 + 1);
        // An error leaves what was read before it in `output`, as lopdf keeps it.
        let _ = decoder.read_to_end(&mut output);
    }
    if output.len() > bound {
        return Err(TooLarge);
    }
    Ok(output)
}

/// LZW's bytes, MSB first with 8-bit literals as PDF writes them, up to the end code or the
/// first error, or `TooLarge`.
fn unlzw(input: &[u8], early_change: bool, bound: usize) -> Result<Vec<u8>, TooLarge> {
    use weezl::{BitOrder, decode::Decoder};
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut sink = Bounded { bytes: Vec::new(), bound, exceeded: false };
    let mut stream = decoder.into_stream(&mut sink);
    // Written out in small pieces, so the bound is checked as it goes.
    stream.set_buffer_size(64 << 10);
    let _ = stream.decode_all(input);
    if sink.exceeded {
        return Err(TooLarge);
    }
    Ok(sink.bytes)
}

/// A writer that stops at a bound.
struct Bounded {
    bytes: Vec<u8>,
    bound: usize,
    exceeded: bool,
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.bound {
            self.exceeded = true;
            return Err(std::io::Error::other("the stream expands past the bound"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The predictor's rows undone, as lopdf undoes them (`None` when they do not fit the data,
/// where lopdf gives up on the stream). lopdf allocates two rows first, so a row longer than
/// the bound is refused before.
fn predict(data: Vec<u8>, filters: &Filters, bound: usize) -> Result<Option<Vec<u8>>, TooLarge> {
    let Some(predictor) = filters.predictor else { return Ok(Some(data)) };
    if predictor.row > bound as u128 {
        return Err(TooLarge);
    }
    Ok(pdf_extract::filters::png::decode_frame(
        &data,
        predictor.bytes_per_pixel,
        predictor.pixels_per_row,
    )
    .ok())
}

/// ASCII base-85 as lopdf reads it: `~>` ends it when it is the last thing, whitespace is
/// skipped, a character outside `!`..`u` stops it, `z` is four zeros between groups, a last
/// partial group is padded, and a group too large for 32 bits wraps. `None` where lopdf
/// refuses the stream (a `z` inside a group, a multiplication that overflows).
fn ascii85(input: &[u8], bound: usize) -> Result<Option<Vec<u8>>, TooLarge> {
    let input = input.strip_suffix(b"~>").unwrap_or(input);
    let mut output = Vec::new();
    let (mut group, mut count) = (0u32, 0usize);
    for &c in input {
        if output.len() > bound {
            return Err(TooLarge);
        }
        if c == b'z' {
            if count != 0 {
                return Ok(None);
            }
            output.extend_from_slice(&[0; 4]);
            continue;
        }
        if is_ascii85_space(c) {
            continue;
        }
        if !(b'!'..=b'u').contains(&c) {
            break;
        }
        // lopdf refuses a multiplication that overflows, and lets an addition wrap.
        let Some(next) = group.checked_mul(85) else { return Ok(None) };
        group = next.wrapping_add(u32::from(c - b'!'));
        count += 1;
        if count == 5 {
            output.extend_from_slice(&group.to_be_bytes());
            (group, count) = (0, 0);
        }
    }
    if count > 0 {
        for _ in count..5 {
            let Some(next) = group.checked_mul(85) else { return Ok(None) };
            group = next.wrapping_add(84);
        }
        output.extend_from_slice(&group.to_be_bytes()[..count - 1]);
    }
    if output.len() > bound {
        return Err(TooLarge);
    }
    Ok(Some(output))
}

/// ASCII whitespace as Rust's `u8::is_ascii_whitespace` (and lopdf) means it.
fn is_ascii85_space(c: u8) -> bool {
    c.is_ascii_whitespace()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_pdfs::{flate, flate_bomb};

    fn filters(names: &[&str]) -> Filters {
        Filters {
            names: names.iter().map(|n| n.as_bytes().to_vec()).collect(),
            predictor: None,
            early_change: true,
        }
    }

    #[test]
    fn each_filter_decodes_what_it_encoded() {
        let text = b"BT /F1 10 Tf (01/01/2026 SPOTIFY -9.99) Tj ET".to_vec();
        let flated = flate(&text);
        assert_eq!(
            decode(&flated, &filters(&["FlateDecode"]), 1000),
            Ok(Decoded::Bytes(text.clone()))
        );
        assert_eq!(
            decode(b"87cURD]i,\"Ebo80~>", &filters(&["ASCII85Decode"]), 1000),
            Ok(Decoded::Bytes(b"Hello World!".to_vec()))
        );
        assert_eq!(
            decode(b"z!!", &filters(&["ASCII85Decode"]), 1000),
            Ok(Decoded::Bytes(vec![0, 0, 0, 0, 0]))
        );
        let mut lzw = Vec::new();
        weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
            .into_stream(&mut lzw)
            .encode_all(&text[..])
            .status
            .unwrap();
        assert_eq!(decode(&lzw, &filters(&["LZWDecode"]), 1000), Ok(Decoded::Bytes(text.clone())));
        assert_eq!(decode(&text, &filters(&["DCTDecode"]), 1000), Ok(Decoded::AsIs));
        assert_eq!(decode(&text, &filters(&[]), 1000), Ok(Decoded::Bytes(Vec::new())));
    }

    #[test]
    fn a_bomb_is_refused_as_it_expands_whatever_the_chain() {
        let bomb = flate_bomb(&[0], 1 << 30);
        assert_eq!(decode(&bomb, &filters(&["FlateDecode"]), 8 << 20), Err(TooLarge));
        // A small stream inside another: the second step is the bomb.
        let nested = flate(&flate_bomb(&[0], 64 << 20));
        assert_eq!(
            decode(&nested, &filters(&["FlateDecode", "FlateDecode"]), 8 << 20),
            Err(TooLarge)
        );
        assert_eq!(
            decode(&b"z".repeat(1 << 20), &filters(&["ASCII85Decode"]), 1 << 20),
            Err(TooLarge)
        );
        let zeros = vec![0u8; 4 << 20];
        let mut lzw = Vec::new();
        weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
            .into_stream(&mut lzw)
            .encode_all(&zeros[..])
            .status
            .unwrap();
        assert!(lzw.len() < 64 << 10, "LZW packs zeros {} to one", zeros.len() / lzw.len());
        assert_eq!(decode(&lzw, &filters(&["LZWDecode"]), 1 << 20), Err(TooLarge));
    }

    #[test]
    fn a_predictor_whose_rows_would_not_fit_the_bound_is_refused_before_decoding() {
        let mut wide = filters(&["FlateDecode"]);
        wide.predictor = Predictor::of(Some(12), Some(1 << 30), None, None);
        assert_eq!(decode(&flate(b"\x00abc"), &wide, 8 << 20), Err(TooLarge));
        let mut rows = filters(&["FlateDecode"]);
        rows.predictor = Predictor::of(Some(12), Some(3), None, None);
        // Two rows of "Up" differences: the second adds the first.
        assert_eq!(
            decode(&flate(b"\x02\x01\x02\x03\x02\x01\x01\x01"), &rows, 100),
            Ok(Decoded::Bytes(vec![1, 2, 3, 2, 3, 4]))
        );
        assert!(Predictor::of(Some(2), Some(1 << 40), None, None).is_none(), "TIFF's is ignored");
    }
}
