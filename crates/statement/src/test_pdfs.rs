//! PDFs made for tests: a small writer of PDF objects with a cross-reference table or stream,
//! zlib streams that expand to any size without being built whole (decompression bombs), and
//! the hostile PDFs the reader's limits are tested with. Compiled for this crate's tests and,
//! with the `test-pdfs` feature, for the tests of other crates; never in the product.

#![expect(clippy::expect_used, reason = "test code: compressing into memory cannot fail")]

use std::io::Write;

use flate2::{Compress, Compression, FlushCompress, write::ZlibEncoder};

/// A PDF written object by object; object numbers start at 1.
#[derive(Default)]
pub struct Pdf {
    objects: Vec<Vec<u8>>,
}

impl Pdf {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an object (the text between `N 0 obj` and `endobj`) and returns its number.
    pub fn add(&mut self, body: impl Into<Vec<u8>>) -> u32 {
        self.objects.push(body.into());
        self.objects.len() as u32
    }

    /// Reserves a number for an object written later with `set`.
    pub fn reserve(&mut self) -> u32 {
        self.add(Vec::new())
    }

    pub fn set(&mut self, number: u32, body: impl Into<Vec<u8>>) {
        self.objects[number as usize - 1] = body.into();
    }

    /// The file, with a classic cross-reference table and `root` as the catalog.
    pub fn finish(self, root: u32) -> Vec<u8> {
        let size = self.objects.len() + 1;
        let (mut pdf, offsets) = self.body();
        let xref = pdf.len();
        pdf.extend_from_slice(format!("xref\n0 {size}\n0000000000 65535 f \n").as_bytes());
        for offset in offsets {
            pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        pdf.extend_from_slice(
            format!("trailer\n<< /Size {size} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n")
                .as_bytes(),
        );
        pdf
    }

    /// The file, with a cross-reference stream whose data is `xref_data` (already encoded) and
    /// whose dictionary adds `xref_dict`, as PDF 1.5 writers make them.
    pub fn finish_with_xref_stream(self, root: u32, xref_dict: &str, xref_data: &[u8]) -> Vec<u8> {
        let size = self.objects.len() + 2;
        let (mut pdf, _) = self.body();
        let xref = pdf.len();
        pdf.extend_from_slice(format!("{} 0 obj\n", size - 1).as_bytes());
        pdf.extend_from_slice(&stream(
            &format!("/Type /XRef /Size {size} /W [1 4 2] /Root {root} 0 R {xref_dict}"),
            xref_data,
        ));
        pdf.extend_from_slice(format!("\nendobj\nstartxref\n{xref}\n%%EOF\n").as_bytes());
        pdf
    }

    fn body(&self) -> (Vec<u8>, Vec<usize>) {
        let mut pdf = b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n".to_vec();
        let mut offsets = Vec::new();
        for (i, object) in self.objects.iter().enumerate() {
            offsets.push(pdf.len());
            pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
            pdf.extend_from_slice(object);
            pdf.extend_from_slice(b"\nendobj\n");
        }
        (pdf, offsets)
    }
}

/// A stream object's text: the dictionary (without `<<` and `>>`) with its `/Length`, then
/// the data.
pub fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

/// `data` compressed as a zlib stream (`/FlateDecode`).
pub fn flate(data: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(data).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

/// A zlib stream that expands to `pattern` repeated to at least `expanded` bytes (whole chunks
/// of about a mebibyte), built in about
/// `expanded / 1000` bytes without ever holding the expanded data: one block of a mebibyte
/// compressed once with a full flush (so it refers to nothing before it) and repeated.
pub fn flate_bomb(pattern: &[u8], expanded: u64) -> Vec<u8> {
    // Whole patterns a chunk, so the repeats join up.
    let chunk_length = (1 << 20) / pattern.len() * pattern.len();
    let chunk: Vec<u8> = pattern.iter().copied().cycle().take(chunk_length).collect();
    let mut first = Compress::new(Compression::best(), true);
    let mut header_and_block = Vec::with_capacity(chunk_length);
    first
        .compress_vec(&chunk, &mut header_and_block, FlushCompress::Full)
        .expect("compressing in memory");
    // The same chunk again, after a full flush, compresses to the same bytes without the
    // header: that block is what repeats.
    let mut block = Vec::with_capacity(chunk_length);
    first.compress_vec(&chunk, &mut block, FlushCompress::Full).expect("compressing in memory");
    let chunks = expanded.div_ceil(chunk_length as u64).max(1);
    let mut out = header_and_block;
    for _ in 1..chunks {
        out.extend_from_slice(&block);
    }
    let mut end = Vec::with_capacity(64);
    let mut last = Compress::new(Compression::best(), false);
    last.compress_vec(&[], &mut end, FlushCompress::Finish).expect("compressing in memory");
    out.extend_from_slice(&end);
    out.extend_from_slice(&adler32_of_repeats(&chunk, chunks).to_be_bytes());
    out
}

/// The Adler-32 checksum of `chunk` repeated `times` times, so a bomb is a valid zlib stream:
/// the chunk's checksum once, then combined with itself (as zlib's `adler32_combine` does).
fn adler32_of_repeats(chunk: &[u8], times: u64) -> u32 {
    const MOD: u64 = 65521;
    let (mut a, mut b) = (1u64, 0u64);
    for &byte in chunk {
        a = (a + u64::from(byte)) % MOD;
        b = (b + a) % MOD;
    }
    let one = (a, b);
    let length = chunk.len() as u64 % MOD;
    let mut sum = one;
    for _ in 1..times {
        // The checksum of `sum`'s bytes followed by the chunk's.
        let a = (sum.0 + one.0 + MOD - 1) % MOD;
        let b = (sum.1 + one.1 + length * (sum.0 + MOD - 1)) % MOD;
        sum = (a, b);
    }
    ((sum.1 << 16) | sum.0) as u32
}

/// Helvetica as a simple font, the one most test pages use.
pub const HELVETICA: &str =
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";

/// A one-page statement-like PDF whose page has this content stream (its dictionary adds
/// `content_dict`, e.g. a filter) and these extra resources (besides `/Font << /F1 … >>`).
pub fn one_page(content_dict: &str, content: &[u8], resources: &str) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let font = pdf.add(HELVETICA);
    page_with(
        pdf,
        &stream(content_dict, content),
        &format!("/Font << /F1 {font} 0 R >> {resources}"),
    )
}

/// A statement's lines as a page's text.
pub fn text_lines(lines: &[&str]) -> Vec<u8> {
    let mut content = String::from("BT /F1 10 Tf 50 760 Td 14 TL\n");
    for line in lines {
        let escaped = line.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)");
        content.push_str(&format!("({escaped}) Tj T*\n"));
    }
    content.push_str("ET");
    content.into_bytes()
}

/// The outside test's first PDF: about a mebibyte, one page whose content stream expands to
/// a gibibyte of zeros.
pub fn gibibyte_of_zeros() -> Vec<u8> {
    one_page("/Filter /FlateDecode", &flate_bomb(&[0], 1 << 30), "")
}

/// A page whose content expands to `expanded` bytes of text-showing operators.
pub fn text_operators(expanded: u64) -> Vec<u8> {
    one_page(
        "/Filter /FlateDecode",
        &flate_bomb(b"BT /F1 9 Tf 10 10 Td (aaaaaaaa) Tj ET\n", expanded),
        "",
    )
}

/// A PDF made to cost the reader without bound, and how the reader answers it.
pub struct Hostile {
    pub name: &'static str,
    pub pdf: fn() -> Vec<u8>,
    /// The start of the refusal's message.
    pub refused: &'static str,
}

/// The refusals' openings, as `StatementError` words them.
const TOO_LARGE: &str = "the PDF unpacks to more than";
const TOO_COMPLEX: &str = "the PDF takes more work to read than a statement";
const UNREADABLE: &str = "this PDF cannot be opened";

/// Every kind of hostile PDF the reader bounds: each unpacks, nests or repeats without limit
/// in a file of at most a few mebibytes.
pub fn hostile() -> Vec<Hostile> {
    vec![
        Hostile {
            name: "a content stream of a gibibyte of zeros",
            pdf: gibibyte_of_zeros,
            refused: TOO_LARGE,
        },
        Hostile {
            name: "a content stream of 512 MiB of text operators",
            pdf: || text_operators(512 << 20),
            refused: TOO_LARGE,
        },
        Hostile {
            name: "a content stream of 50 MB of text operators",
            pdf: || text_operators(50_000_000),
            refused: TOO_LARGE,
        },
        Hostile {
            name: "two filters, each a bomb of the other",
            pdf: || {
                one_page(
                    "/Filter [/FlateDecode /FlateDecode]",
                    &flate(&flate_bomb(&[0], 256 << 20)),
                    "",
                )
            },
            refused: TOO_LARGE,
        },
        Hostile {
            name: "forty pages of 3 MiB of drawing each",
            pdf: || {
                pages(&vec![flate_bomb(b"0 0 m 1 1 l S\n", 3 << 20); 40], "/Filter /FlateDecode")
            },
            refused: TOO_LARGE,
        },
        Hostile {
            name: "an object of 100,000 nested arrays",
            pdf: || {
                one_page(
                    "",
                    &text_lines(&["01/01/2026 A 1.00"]),
                    &format!("/Deep {}", nested_arrays()),
                )
            },
            refused: UNREADABLE,
        },
        Hostile {
            name: "a content stream of 100,000 nested arrays",
            pdf: || one_page("", nested_arrays().as_bytes(), ""),
            refused: UNREADABLE,
        },
        Hostile { name: "a form that draws itself", pdf: form_drawing_itself, refused: UNREADABLE },
        Hostile {
            name: "a 1 MiB form drawn 20,000 times",
            pdf: || form_drawn(&flate_bomb(b"0 0 m 1 1 l S\n", 1 << 20), 20_000),
            refused: TOO_COMPLEX,
        },
        Hostile {
            name: "one 1 MiB content stream listed 20,000 times",
            pdf: || {
                let mut pdf = Pdf::new();
                let content = pdf
                    .add(stream("/Filter /FlateDecode", &flate_bomb(b"0 0 m 1 1 l S\n", 1 << 20)));
                let list = vec![format!("{content} 0 R"); 20_000].join(" ");
                with_page(pdf, |pages, _| {
                    format!(
                        "<< /Type /Page /Parent {pages} 0 R /MediaBox [0 0 612 792] /Contents [{list}] >>"
                    )
                })
            },
            refused: TOO_COMPLEX,
        },
        Hostile {
            name: "a font whose ToUnicode map covers every 4-byte code",
            pdf: || {
                font_with_cmap(
                    "",
                    b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <00000000> <FFFFFFFF> endcodespacerange 1 beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange endcmap CMapName currentdict /CMap defineresource pop end end",
                )
            },
            refused: TOO_COMPLEX,
        },
        Hostile {
            name: "a page whose parent is itself",
            pdf: || {
                let mut pdf = Pdf::new();
                let contents =
                    pdf.add(stream("", b"BT /F1 10 Tf 50 700 Td (01/01/2026 A 1.00) Tj ET"));
                with_page(pdf, |_, page| {
                    format!("<< /Type /Page /Parent {page} 0 R /Contents {contents} 0 R >>")
                })
            },
            refused: UNREADABLE,
        },
        Hostile {
            name: "a cross-reference stream of a gibibyte",
            pdf: || pageless_with_xref_stream("/Filter /FlateDecode", &flate_bomb(&[0], 1 << 30)),
            refused: TOO_LARGE,
        },
        Hostile {
            name: "a cross-reference stream whose fields are a terabyte wide",
            pdf: || pageless_with_xref_stream("/W [1099511627776 1 1]", b"\x01"),
            refused: UNREADABLE,
        },
        Hostile {
            name: "an object stream of a gibibyte of objects",
            pdf: || {
                pageless_with_stream(
                    "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode",
                    &flate_bomb(b"9 0 ", 1 << 30),
                )
            },
            refused: TOO_LARGE,
        },
        Hostile {
            name: "an object stream whose index reads one big object 100,000 times",
            pdf: || {
                let index: String = (0..100_000).map(|i| format!("{} 0 ", 100 + i)).collect();
                let mut data = index.clone().into_bytes();
                data.extend_from_slice(format!("[{}]", "0 ".repeat(100_000)).as_bytes());
                pageless_with_stream(
                    &format!("/Type /ObjStm /N 100000 /First {} /Filter /FlateDecode", index.len()),
                    &flate(&data),
                )
            },
            refused: TOO_COMPLEX,
        },
        Hostile {
            name: "a cross-reference table pointing 100,000 objects at one big object",
            pdf: || one_object_listed(100_000, 100_001),
            refused: TOO_COMPLEX,
        },
        Hostile {
            name: "a predictor whose rows are a gibibyte wide",
            pdf: || {
                one_page(
                    "/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 1073741824 >>",
                    &flate(b"\x00abc"),
                    "",
                )
            },
            refused: TOO_LARGE,
        },
        Hostile {
            name: "LZW packing 64 MiB into a few kilobytes",
            pdf: || {
                let zeros = vec![0u8; 64 << 20];
                let mut lzw = Vec::new();
                let _ = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
                    .into_stream(&mut lzw)
                    .encode_all(&zeros[..]);
                one_page("/Filter /LZWDecode", &lzw, "")
            },
            refused: TOO_LARGE,
        },
        // Found by reading the checks against lopdf and pdf-extract (a review of the first
        // version): each once slipped past them.
        Hostile {
            name: "a self-drawing form on a page whose own resources are not a dictionary",
            pdf: || {
                let mut pdf = Pdf::new();
                let form = add_self_drawing_form(&mut pdf);
                let contents = pdf.add(stream("", b"/X Do"));
                let pages = pdf.reserve();
                let page = pdf.add(format!(
                    "<< /Type /Page /Parent {pages} 0 R /MediaBox [0 0 612 792] /Contents {contents} 0 R /Resources 0 >>"
                ));
                pdf.set(pages, format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 /Resources << /XObject << /X {form} 0 R >> >> >>"));
                let catalog = pdf.add(format!("<< /Type /Catalog /Pages {pages} 0 R >>"));
                pdf.finish(catalog)
            },
            refused: UNREADABLE,
        },
        Hostile {
            name: "a ToUnicode map of every 4-byte code that says its clear text is empty",
            pdf: || {
                font_with_cmap(
                    "/Length1 0",
                    b"1 beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange",
                )
            },
            refused: TOO_COMPLEX,
        },
        Hostile {
            name: "a ToUnicode map of every 4-byte code with its count glued to the operator",
            pdf: || font_with_cmap("", b"1beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange"),
            refused: TOO_COMPLEX,
        },
        Hostile {
            name: "a ToUnicode map of 50,000 nested parentheses",
            pdf: || font_with_cmap("", "(".repeat(50_000).as_bytes()),
            refused: UNREADABLE,
        },
        Hostile {
            name: "deep brackets after a BI that starts no inline image",
            pdf: || {
                let content =
                    format!("1 BI /W 1000000 /H 1 /BPC 8 /CS /Gray ID {}", nested_arrays());
                one_page("", content.as_bytes(), "")
            },
            refused: UNREADABLE,
        },
        Hostile {
            name: "deep brackets after an inline image whose ID is glued to its data",
            pdf: || {
                let content = format!("BI /W 2 /H 1 /BPC 8 /CS /Gray IDx( EI {}", nested_arrays());
                one_page("", content.as_bytes(), "")
            },
            refused: UNREADABLE,
        },
        Hostile {
            name: "deep nesting behind a header whose generation has six digits",
            pdf: || {
                let mut pdf = one_page("", &text_lines(&["01/01/2026 A 1.00"]), "");
                let deep = nested_arrays();
                let at = pdf.windows(4).rposition(|w| w == b"xref").unwrap_or(pdf.len());
                pdf.splice(at..at, format!("99 000000 obj\n{deep}\nendobj\n").into_bytes());
                pdf
            },
            refused: UNREADABLE,
        },
        Hostile {
            name: "an ASCII85 group that wraps, in front of a bomb in an object stream",
            pdf: || {
                let bomb = flate_bomb(b"9 0 ", 256 << 20);
                let mut encoded = ascii85(&bomb);
                // `s8W-"` is over 2^32: lopdf (built for release) lets the sum wrap, keeps
                // what it decoded, and expands it.
                encoded.extend_from_slice(b"s8W-\"~>");
                pageless_with_stream(
                    "/Type /ObjStm /N 1 /First 4 /Filter [/ASCII85Decode /FlateDecode]",
                    &encoded,
                )
            },
            refused: TOO_LARGE,
        },
        Hostile {
            name: "a cross-reference section of one entry followed by 100,000 on one object",
            pdf: || one_object_listed(100_000, 1),
            refused: TOO_COMPLEX,
        },
    ]
}

/// PDFs whose cost comes from what pdf-extract does per operator, which the checks do not
/// model: refused only because the process that reads a PDF is bounded (`exhale read-pdf`).
/// Never read in a test's own process: they take it past any memory it has.
pub fn beyond_the_checks() -> Vec<Case> {
    vec![(
        "a colour of 100,000 numbers saved 150,000 times (each q copies the graphics state)",
        || {
            let mut content = "0 ".repeat(100_000);
            content.push_str("sc\n");
            content.push_str(&"q\n".repeat(150_000));
            one_page("/Filter /FlateDecode", &flate(content.as_bytes()), "")
        },
    )]
}

/// A file of one big object that its cross-reference table lists `times` times under
/// different numbers, in a section that says it has `count` entries (lopdf reads them all).
fn one_object_listed(times: usize, count: usize) -> Vec<u8> {
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let at = pdf.len();
    pdf.extend_from_slice(format!("1 0 obj\n[{}]\nendobj\n", "0 ".repeat(200_000)).as_bytes());
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {count}\n0000000000 65535 f \n").as_bytes());
    for _ in 0..times {
        pdf.extend_from_slice(format!("{at:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", times + 1)
            .as_bytes(),
    );
    pdf
}

/// One page whose font has this ToUnicode CMap (its stream's dictionary adds `cmap_dict`).
fn font_with_cmap(cmap_dict: &str, cmap: &[u8]) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let cmap = pdf.add(stream(cmap_dict, cmap));
    let font = pdf.add(format!(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode {cmap} 0 R >>"
    ));
    page_with(
        pdf,
        &stream("", b"BT /F2 10 Tf 50 700 Td (01/01/2026 A 1.00) Tj ET"),
        &format!("/Font << /F2 {font} 0 R >>"),
    )
}

/// ASCII base-85 of `data` (whole groups; a last partial group padded, as encoders do).
pub fn ascii85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * 5 / 4 + 4);
    for chunk in data.chunks(4) {
        let mut group = [0u8; 4];
        group[..chunk.len()].copy_from_slice(chunk);
        let mut n = u32::from_be_bytes(group);
        let mut digits = [0u8; 5];
        for digit in digits.iter_mut().rev() {
            *digit = b'!' + (n % 85) as u8;
            n /= 85;
        }
        out.extend_from_slice(&digits[..chunk.len() + 1]);
    }
    out
}

/// A PDF made for measuring, by name.
pub type Case = (&'static str, fn() -> Vec<u8>);

/// `pattern` repeated to exactly `bytes` bytes.
pub fn repeated(pattern: &[u8], bytes: usize) -> Vec<u8> {
    pattern.iter().copied().cycle().take(bytes).collect()
}

/// PDFs just within the limits, the most a file may cost the reader: for measuring
/// (`examples/pdf_limits.rs`), not refused.
pub fn heaviest() -> Vec<Case> {
    const PATHS: &[u8] = b"0 0 m 1 1 l S\n";
    const TEXT: &[u8] = b"BT /F1 9 Tf 10 10 Td (aaaaaaaa) Tj ET\n";
    // A page's content just under `MAX_PAGE_CONTENT`, in whole operators.
    fn page(pattern: &[u8]) -> Vec<u8> {
        let most = crate::pdf::limits::MAX_PAGE_CONTENT - 64;
        flate(&repeated(pattern, most / pattern.len() * pattern.len()))
    }
    vec![
        ("within limits: a page of 512 KiB of path operators", || {
            pages(&[page(PATHS)], "/Filter /FlateDecode")
        }),
        ("within limits: a page of 512 KiB of text operators", || {
            pages(&[page(TEXT)], "/Filter /FlateDecode")
        }),
        ("within limits: 31 pages of 512 KiB of path operators", || {
            pages(&vec![page(PATHS); 31], "/Filter /FlateDecode")
        }),
        ("within limits: 31 pages of 512 KiB of text operators", || {
            pages(&vec![page(TEXT); 31], "/Filter /FlateDecode")
        }),
        ("within limits: a page drawing a 256 KiB form 15 times", || {
            form_drawn(&flate(&repeated(PATHS, 256 << 10)), 15)
        }),
    ]
}

/// A PDF whose pages have these content streams (each with `content_dict`).
pub fn pages(contents: &[Vec<u8>], content_dict: &str) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let catalog = pdf.reserve();
    let pages = pdf.reserve();
    let font = pdf.add(HELVETICA);
    let kids: Vec<String> = contents
        .iter()
        .map(|content| {
            let contents = pdf.add(stream(content_dict, content));
            let page = pdf.add(format!(
                "<< /Type /Page /Parent {pages} 0 R /MediaBox [0 0 612 792] /Contents {contents} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>"
            ));
            format!("{page} 0 R")
        })
        .collect();
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {pages} 0 R >>"));
    pdf.set(pages, format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), kids.len()));
    pdf.finish(catalog)
}

/// One page with this content stream (an object's whole text) and these resources.
fn page_with(mut pdf: Pdf, content: &[u8], resources: &str) -> Vec<u8> {
    let contents = pdf.add(content.to_vec());
    with_page(pdf, |pages, _| {
        format!(
            "<< /Type /Page /Parent {pages} 0 R /MediaBox [0 0 612 792] /Contents {contents} 0 R /Resources << {resources} >> >>"
        )
    })
}

/// The file with one page, whose dictionary `page` writes from the numbers of the page tree
/// and of the page itself.
fn with_page(mut pdf: Pdf, page: impl FnOnce(u32, u32) -> String) -> Vec<u8> {
    let pages = pdf.reserve();
    let number = pdf.reserve();
    pdf.set(number, page(pages, number));
    pdf.set(pages, format!("<< /Type /Pages /Kids [{number} 0 R] /Count 1 >>"));
    let catalog = pdf.add(format!("<< /Type /Catalog /Pages {pages} 0 R >>"));
    pdf.finish(catalog)
}

/// A file without pages whose one other object is a stream with this dictionary and data.
fn pageless_with_stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut pdf = Pdf::new();
    pdf.add(stream(dict, data));
    let catalog = without_pages(&mut pdf);
    pdf.finish(catalog)
}

/// A file without pages whose cross-reference stream has this dictionary and data.
fn pageless_with_xref_stream(xref_dict: &str, xref_data: &[u8]) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let catalog = without_pages(&mut pdf);
    pdf.finish_with_xref_stream(catalog, xref_dict, xref_data)
}

/// Adds an empty page tree and its catalog; the catalog's number.
fn without_pages(pdf: &mut Pdf) -> u32 {
    let pages = pdf.add("<< /Type /Pages /Kids [] /Count 0 >>");
    pdf.add(format!("<< /Type /Catalog /Pages {pages} 0 R >>"))
}

/// Adds a form whose resources name itself and which draws itself; the form's number.
fn add_self_drawing_form(pdf: &mut Pdf) -> u32 {
    let form = pdf.reserve();
    pdf.set(
        form,
        stream(
            &format!(
                "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X {form} 0 R >> >>"
            ),
            b"/X Do",
        ),
    );
    form
}

/// A page that draws a form which draws itself.
fn form_drawing_itself() -> Vec<u8> {
    let mut pdf = Pdf::new();
    let form = add_self_drawing_form(&mut pdf);
    page_with(pdf, &stream("", b"/X Do"), &format!("/XObject << /X {form} 0 R >>"))
}

/// A page that draws, `times` times, a form whose content is `flate_content` (already
/// compressed).
fn form_drawn(flate_content: &[u8], times: usize) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let form = pdf.add(stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Filter /FlateDecode",
        flate_content,
    ));
    let content = flate(&b"/X Do\n".repeat(times));
    page_with(
        pdf,
        &stream("/Filter /FlateDecode", &content),
        &format!("/XObject << /X {form} 0 R >>"),
    )
}

/// An array nested 100,000 deep: `[[[…]]]`.
fn nested_arrays() -> String {
    format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn a_bomb_is_a_valid_zlib_stream_of_the_size_asked() {
        let bomb = flate_bomb(b"abc", 3 << 20);
        assert!(bomb.len() < 16 << 10, "{} bytes", bomb.len());
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(&bomb[..]).read_to_end(&mut out).unwrap();
        assert!((3 << 20..4 << 20).contains(&out.len()), "{}", out.len());
        assert_eq!(out, repeated(b"abc", out.len()));
    }
}
