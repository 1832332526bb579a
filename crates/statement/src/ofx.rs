//! OFX and QFX (Quicken) statements: SGML (OFX 1.x, tags often left open) and XML (OFX 2.x).
//! Each `<STMTTRN>` is a transaction: `DTPOSTED`, `TRNAMT` (signed), `NAME` and `MEMO`; the
//! statement's currency is `CURDEF`.

use domain::money::Currency;

use crate::{Problem, Statement, StatementError, Transaction};

/// Whether the text is an OFX document.
pub(crate) fn is_ofx(text: &str) -> bool {
    let head: String = text.chars().take(2000).collect::<String>().to_uppercase();
    head.contains("OFXHEADER") || head.contains("<OFX>")
}

/// The value of `<TAG>` in `block`: the text up to the next tag or line end.
fn field<'a>(block: &'a str, upper: &str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = upper.find(&open)? + open.len();
    let rest = &block[start..];
    let end = rest.find(['<', '\n', '\r']).unwrap_or(rest.len());
    Some(rest[..end].trim()).filter(|v| !v.is_empty())
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

pub(crate) fn read(text: &str, default_currency: Currency) -> Result<Statement, StatementError> {
    let upper = text.to_uppercase();
    let currency = field(text, &upper, "CURDEF")
        .and_then(|code| Currency::parse(&code.to_uppercase()).ok())
        .unwrap_or(default_currency);
    let mut statement = Statement {
        notes: vec![format!("OFX, currency {}", currency.code())],
        ..Statement::default()
    };
    let mut from = 0;
    while let Some(found) = upper[from..].find("<STMTTRN>") {
        let start = from + found;
        let end = upper[start..].find("</STMTTRN>").map_or_else(
            || upper[start + 9..].find("<STMTTRN>").map_or(upper.len(), |next| start + 9 + next),
            |close| start + close,
        );
        let (block, block_upper) = (&text[start..end], &upper[start..end]);
        let line = line_of(text, start);
        from = end.max(start + 9);
        let date = field(block, block_upper, "DTPOSTED")
            .and_then(|d| d.get(..8))
            .and_then(|d| jiff::civil::Date::strptime("%Y%m%d", d).ok());
        let Some(date) = date else {
            statement.problems.push(Problem {
                line,
                message: "a transaction without a readable DTPOSTED date".into(),
            });
            continue;
        };
        let amount = field(block, block_upper, "TRNAMT")
            .map(|a| a.replace(',', "."))
            .and_then(|a| domain::money::Money::parse(a.trim_start_matches('+'), currency).ok());
        let Some(amount) = amount else {
            statement.problems.push(Problem {
                line,
                message: "a transaction without a readable TRNAMT amount".into(),
            });
            continue;
        };
        let description = [field(block, block_upper, "NAME"), field(block, block_upper, "MEMO")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        statement.transactions.push(Transaction {
            line,
            date,
            amount_minor: amount.minor(),
            currency,
            description,
        });
    }
    if statement.transactions.is_empty() {
        return Err(StatementError::NoTable(
            "the OFX file holds no transactions (<STMTTRN>)".into(),
        ));
    }
    Ok(statement)
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
}
