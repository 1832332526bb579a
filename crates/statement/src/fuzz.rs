//! Fuzz targets of the statement readers (run by `cargo nextest run -E 'test(fuzz_)'`; see the
//! `fuzz` crate for budgets). Each feeds mutations of real bank exports to one reader, which
//! must answer with statements or errors, never panic.

use std::path::PathBuf;

use domain::money::Currency;

fn seeds(extensions: &[&str]) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/realworld"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).collect())
        .unwrap_or_default();
    files.sort();
    let seeds: Vec<Vec<u8>> = files
        .iter()
        .filter(|path| {
            path.extension().and_then(|e| e.to_str()).is_some_and(|e| extensions.contains(&e))
        })
        .filter_map(|path| std::fs::read(path).ok())
        .collect();
    assert!(!seeds.is_empty(), "no seeds with {extensions:?} in {}", dir.display());
    seeds
}

fn crashes() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/fuzz-crashes"))
}

fn eur() -> Currency {
    Currency::parse("EUR").unwrap_or_else(|_| unreachable!("EUR is a currency"))
}

const CSV_TOKENS: &[&[u8]] = &[
    b"Date",
    b"Datum",
    b"Amount",
    b"Betrag",
    b"Description",
    b"Buchungstag",
    b"\"\"",
    b"1.234,56",
    b"-12,99",
    b"(12.99)",
    b"EUR",
    b"\xe4",
    b"\xfc\xdf",
    b"\r\n\r\n",
];

const OFX_TOKENS: &[&[u8]] = &[
    b"<STMTTRN>",
    b"</STMTTRN>",
    b"<TRNAMT>",
    b"<DTPOSTED>",
    b"<NAME>",
    b"<MEMO>",
    b"<CURDEF>",
    b"<OFX>",
    b"OFXHEADER:100",
    b"<?OFX OFXHEADER=\"200\"?>",
    b"20261301",
    b"[-5:EST]",
    b"&amp;",
    b"<BANKTRANLIST>",
];

#[test]
fn fuzz_csv() {
    fuzz::check("csv", &seeds(&["csv"]), CSV_TOKENS, &crashes(), |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let (rows, _) = crate::csv::split(&text);
        let _ = crate::table::read(&rows, eur());
    });
}

#[test]
fn fuzz_ofx() {
    fuzz::check("ofx", &seeds(&["ofx"]), OFX_TOKENS, &crashes(), |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let _ = crate::ofx::is_ofx(&text);
        let _ = crate::ofx::read(&text, eur());
    });
}

#[test]
fn fuzz_encodings() {
    // Every seed as it is, plus Latin-1, UTF-16 and BOM edges from the mutations.
    let tokens: &[&[u8]] = &[b"\xff\xfe", b"\xfe\xff", b"\x00", b"\xe4\x00", b"\xc3\xa4", b"\x80"];
    fuzz::check("encodings", &seeds(&["csv", "ofx"]), tokens, &crashes(), |bytes| {
        let _ = crate::decode::decode(bytes);
    });
}

#[test]
fn fuzz_pdf_text() {
    let seeds = vec![
        crate::pdf::tests::pdf_with_lines(&[
            "Example Bank - Current account statement",
            "Date Description Amount Balance",
            "15/01/2026 NETFLIX.COM 866-579 -12.99 1,187.01",
            "17/01/2026 TESCO STORES 4411 -45.20 1,141.81",
        ]),
        crate::pdf::tests::pdf_with_lines(&["Datum Text Betrag", "01.02.2026 SPOTIFY P1 -10,99"]),
    ];
    let tokens: &[&[u8]] = &[
        b"obj",
        b"endobj",
        b"stream",
        b"endstream",
        b"Tj",
        b"/Length 9999",
        b"xref",
        b"trailer",
        b"(",
        b"[[[[[[[[[[[[[[[[",
        b"<<",
        b"0 R",
        b"/Parent 5 0 R",
        b"/XObject << /Im1 6 0 R >>",
        b"/Im1 Do",
        b"BI /W 9 /H 9 /BPC 8 /CS /Gray ID",
        b"1 beginbfrange <0000> <FFFF> <0041> endbfrange",
    ];
    fuzz::check("pdf_text", &seeds, tokens, &crashes(), |bytes| {
        if let Ok(rows) = crate::pdf::rows(bytes) {
            let _ = crate::table::read(&rows, eur());
        }
    });
}

/// The content scan that bounds nesting reads brackets where lopdf does: on contents with
/// strings, escapes, comments and inline images around brackets, it never counts less nesting
/// than lopdf parses (lopdf runs on a thread with room for any depth these inputs hold).
#[test]
fn fuzz_pdf_nesting() {
    let seeds: Vec<Vec<u8>> = [
        &b"BT /F1 10 Tf [(a) -20 (b)] TJ ET q << /A [1 2] >> BDC EMC Q"[..],
        b"[(\\)] TJ [(\\() [(])] TJ % [[[[ \n [1] TJ",
        b"BI /W 2 /H 2 /BPC 8 /CS /Gray ID [[[[ EI [[1]] TJ",
        b"<4142> Tj [<5B5B> (]) ((nested) [) ] TJ /A#5B#5D Do",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect();
    let tokens: &[&[u8]] = &[
        b"[", b"]", b"<<", b">>", b"(", b")", b"\\", b"%", b"\n", b"\r", b"<", b">", b"ID ", b"EI",
        b"BI",
    ];
    fuzz::check("pdf_nesting", &seeds, tokens, &crashes(), |bytes| {
        let ours = crate::pdf::nesting(bytes);
        let content = bytes.to_vec();
        let theirs = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || {
                pdf_extract::content::Content::decode(&content)
                    .ok()
                    .map(|c| c.operations.iter().flat_map(|o| &o.operands).map(depth).max())
            })
            .and_then(|thread| thread.join().map_err(|_| std::io::Error::other("lopdf panicked")))
            .ok()
            .flatten()
            .flatten();
        if let Some(theirs) = theirs {
            assert!(ours >= theirs, "lopdf nests {theirs}, the scan counted {ours}");
        }
    });
}

/// How deeply an object nests arrays and dictionaries.
fn depth(object: &pdf_extract::Object) -> usize {
    match object {
        pdf_extract::Object::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        pdf_extract::Object::Dictionary(dict) => {
            1 + dict.iter().map(|(_, v)| depth(v)).max().unwrap_or(0)
        }
        _ => 0,
    }
}

#[test]
fn fuzz_camt_mt940_qif() {
    let seeds: Vec<Vec<u8>> = [
        crate::camt::tests::STATEMENT,
        crate::mt940::tests::STATEMENT,
        "!Type:Bank\nD01/15'24\nT-12.50\nPNETFLIX.COM\n^\nD02/15'24\nT-1,250.00\nMx\n^\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let tokens: &[&[u8]] =
        &[b"<Ntry>", b"</Ntry>", b"<ns2:", b":61:", b":86:", b"?32", b"^\n", b"\nD", b"\nT-"];
    fuzz::check("structured", &seeds, tokens, &crashes(), |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let _ = crate::camt::read(&text, eur());
        let _ = crate::mt940::read(&text, eur());
        let _ = crate::qif::read(&text, eur());
    });
}

#[test]
fn fuzz_statement() {
    // The whole reader, as an upload reaches it: any format, any encoding.
    fuzz::check("statement", &seeds(&["csv", "ofx"]), CSV_TOKENS, &crashes(), |bytes| {
        if let Ok(statement) = crate::read(bytes, eur()) {
            let _ = crate::recurring::detect(&statement.transactions);
        }
    });
}

#[test]
fn fuzz_merchant() {
    let names: Vec<Vec<u8>> = [
        "NETFLIX.COM 866-579-7172 CA",
        "PAYPAL *SPOTIFY P1A2B3",
        "SEPA-LASTSCHRIFT Amazon Prime*2X4",
        "Crème brûlée ✓ 123",
        "",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz::check("merchant", &names, &[b"*", b"#", b".COM", b"\xe2\x80\x8f"], &crashes(), |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let key = crate::merchant::key(&text);
        let name = crate::merchant::display_name(&text);
        // Import finds a merchant again by the name it gave it: the subscription is named
        // display_name(description) and compared by key.
        if !key.is_empty() {
            assert_eq!(crate::merchant::key(&name), key, "{text:?} named {name:?}");
        }
    });
}
