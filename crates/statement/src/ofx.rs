//! OFX, QFX (Quicken) and QBO (QuickBooks) statements: SGML (OFX 1.x, tags often left open,
//! the whole body sometimes on one line) and XML (OFX 2.x, CDATA and entities). Each
//! `<STMTTRN>` is a transaction wherever it stands (bank, card, or the bank part of an
//! investment statement): `DTPOSTED`, `TRNAMT` (signed, either decimal mark, any number of
//! decimals), `NAME` and `MEMO`; the statement's currency is `CURDEF` (else the first
//! `CURSYM`). Zero amounts are not transactions. Work is linear in the file's size.

use domain::money::Currency;

use crate::{LeftOut, Problem, Statement, StatementError, amounts};

/// Whether the text is an OFX document.
pub(crate) fn is_ofx(text: &str) -> bool {
    let head: String = text.chars().take(2000).collect::<String>().to_ascii_uppercase();
    head.contains("OFXHEADER") || head.contains("<OFX>")
}

/// The value of `<TAG>` in `block`: the text up to the next tag or line end, or a CDATA
/// section's text; entities decoded.
fn field(block: &str, upper: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = upper.find(&open)? + open.len();
    let rest = &block[start..];
    let value = match rest.trim_start().strip_prefix("<![CDATA[") {
        Some(cdata) => cdata.split("]]>").next().unwrap_or(cdata).to_owned(),
        None => {
            let end = rest.find(['<', '\n', '\r']).unwrap_or(rest.len());
            unescape(&rest[..end])
        }
    };
    Some(value.trim().to_owned()).filter(|v| !v.is_empty())
}

/// Text with the XML and SGML entities statements use decoded (`&amp;` last, so `&amp;lt;`
/// stays `&lt;`).
pub(crate) fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

/// At most this many problems are listed; the rest are counted.
const MAX_PROBLEMS: usize = 100;

pub(crate) fn read(text: &str, default_currency: Currency) -> Result<Statement, StatementError> {
    // ASCII only: the tags are ASCII, and offsets into both texts must agree.
    let upper = text.to_ascii_uppercase();
    let currency = field(text, &upper, "CURDEF")
        .or_else(|| field(text, &upper, "CURSYM"))
        .and_then(|code| Currency::parse(&code.to_uppercase()).ok())
        .unwrap_or(default_currency);
    let mut statement = Statement {
        notes: vec![format!("OFX, currency {}", currency.code())],
        ..Statement::default()
    };
    let (mut zero, mut unlisted) = (0, 0);
    let mut problem = |statement: &mut Statement, line: usize, message: &str| {
        if statement.problems.len() < MAX_PROBLEMS {
            statement.problems.push(Problem { line, message: message.into() });
        } else {
            unlisted += 1;
        }
    };
    // Lines are counted as the reading moves on, never from the start again.
    let (mut counted_to, mut line) = (0, 1);
    let mut from = 0;
    while let Some(found) = upper[from..].find("<STMTTRN>") {
        let start = from + found;
        let body = start + "<STMTTRN>".len();
        // The block ends at its closing tag, or where the next one opens (SGML leaves tags
        // open), searched no further than that.
        let next_open = upper[body..].find("<STMTTRN>").map_or(upper.len(), |n| body + n);
        let end = upper[body..next_open].find("</STMTTRN>").map_or(next_open, |close| body + close);
        line += text[counted_to..start].matches('\n').count();
        counted_to = start;
        from = end;
        let (block, block_upper) = (&text[start..end], &upper[start..end]);
        let date = field(block, block_upper, "DTPOSTED")
            .and_then(|d| d.get(..8).map(str::to_owned))
            .and_then(|d| jiff::civil::Date::strptime("%Y%m%d", &d).ok());
        let Some(date) = date else {
            problem(&mut statement, line, "a transaction without a readable DTPOSTED date");
            continue;
        };
        let amount = field(block, block_upper, "TRNAMT").and_then(|a| {
            let mark = if a.contains(',') && !a.contains('.') { ',' } else { '.' };
            amounts::parse(&a, mark, currency).ok().flatten()
        });
        let amount_minor = match amount {
            Some(0) => {
                zero += 1;
                continue;
            }
            Some(amount) => amount,
            None => {
                problem(&mut statement, line, "a transaction without a readable TRNAMT amount");
                continue;
            }
        };
        let description = [field(block, block_upper, "NAME"), field(block, block_upper, "MEMO")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        statement.add(line, date, amount_minor, currency, description);
    }
    if unlisted > 0 {
        statement.notes.push(format!("{unlisted} more problems not listed"));
    }
    statement.finish(
        &LeftOut { zero, ..LeftOut::default() },
        "the OFX file holds no transactions (<STMTTRN>)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgml_ofx_with_open_tags() {
        let text = "OFXHEADER:100\nDATA:OFXSGML\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>GBP\n<BANKTRANLIST>\n<STMTTRN>\n<TRNTYPE>DEBIT\n<DTPOSTED>20260115120000[0:GMT]\n<TRNAMT>-12.99\n<FITID>1\n<NAME>NETFLIX.COM\n<MEMO>Subscription\n</STMTTRN>\n<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20260125<TRNAMT>2500.00<NAME>SALARY</STMTTRN>\n<STMTTRN><DTPOSTED>2026-13-99<TRNAMT>-1.00<NAME>BROKEN</STMTTRN>\n</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>";
        assert!(is_ofx(text));
        let statement = read(text, Currency::parse("EUR").unwrap()).unwrap();
        assert_eq!(statement.transactions.len(), 2);
        let netflix = &statement.transactions[0];
        assert_eq!(
            (netflix.amount_minor, netflix.currency.code(), netflix.description.as_str()),
            (-1299, "GBP", "NETFLIX.COM Subscription")
        );
        assert_eq!(netflix.date, jiff::civil::date(2026, 1, 15));
        assert_eq!(statement.transactions[1].amount_minor, 250_000);
        assert_eq!(statement.problems.len(), 1);
    }

    #[test]
    fn xml_ofx_and_an_empty_one() {
        let text = "<?xml version=\"1.0\"?><?OFX OFXHEADER=\"200\"?><OFX><CURDEF>USD</CURDEF><STMTTRN><DTPOSTED>20260203</DTPOSTED><TRNAMT>-9.99</TRNAMT><NAME>SPOTIFY</NAME></STMTTRN></OFX>";
        let statement = read(text, Currency::parse("EUR").unwrap()).unwrap();
        assert_eq!(statement.transactions[0].amount_minor, -999);
        assert_eq!(statement.transactions[0].currency.code(), "USD");
        assert!(read("<OFX></OFX>", Currency::parse("EUR").unwrap()).is_err());
    }

    #[test]
    fn cdata_entities_investment_wrappers_and_zero_amounts() {
        let text = "<OFX><INVSTMTRS><CURDEF>USD<INVBANKTRAN><STMTTRN><DTPOSTED>20120720<TRNAMT>-00000000001500.0000<NAME><![CDATA[Check <1001>]]></NAME><MEMO>A &amp; B</STMTTRN></INVBANKTRAN><STMTTRN><DTPOSTED>20120721<TRNAMT>-0<NAME>comment</STMTTRN></INVSTMTRS></OFX>";
        let statement = read(text, Currency::parse("EUR").unwrap()).unwrap();
        assert_eq!(statement.transactions.len(), 1);
        let check = &statement.transactions[0];
        assert_eq!(
            (check.amount_minor, check.description.as_str()),
            (-150_000, "Check <1001> A & B")
        );
        assert_eq!(statement.notes[1], "left out as not transactions: 1 with a zero amount");
    }

    #[test]
    fn a_million_empty_transactions_are_read_in_linear_time_with_a_bounded_report() {
        let text =
            format!("OFXHEADER:100\n<OFX>{}</OFX>", "<STMTTRN></STMTTRN>\n".repeat(1_000_000));
        let err = read(&text, Currency::parse("EUR").unwrap()).unwrap_err();
        assert_eq!(
            err,
            StatementError::NoTable(
                "line 2: a transaction without a readable DTPOSTED date".into()
            )
        );
        let mut text = text.replacen(
            "<STMTTRN></STMTTRN>",
            "<STMTTRN><DTPOSTED>20260101<TRNAMT>-1.00<NAME>x</STMTTRN>",
            1,
        );
        text.push_str("<STMTTRN><DTPOSTED>20260102");
        let statement = read(&text, Currency::parse("EUR").unwrap()).unwrap();
        assert_eq!(statement.transactions.len(), 1);
        assert_eq!(statement.problems.len(), MAX_PROBLEMS);
        assert_eq!(statement.notes[1], "999900 more problems not listed");
        assert_eq!(statement.problems[0].line, 3);
    }
}
