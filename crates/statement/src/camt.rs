//! ISO 20022 account statements (`camt.053`, and the `camt.052` and `camt.054` reports that
//! European banks export alike): each `<Ntry>` is a transaction with its `<Amt Ccy="…">`, its
//! direction (`<CdtDbtInd>` `DBIT` or `CRDT`), its booking date (`<BookgDt>`, else
//! `<ValDt>`), its status (`PDNG` entries are pending and left out) and the counterparty and
//! remittance text of its details. Namespace prefixes are ignored. Work is linear in the size.

use domain::money::Currency;

use crate::{LeftOut, Problem, Statement, StatementError, amounts, ofx::unescape};

/// Whether the text is an ISO 20022 cash-management document.
pub(crate) fn is_camt(text: &str) -> bool {
    let head: String = text.chars().take(3000).collect();
    head.contains("camt.05") && head.contains("<") && without_prefixes(&head).contains("<Document")
}

/// The XML with namespace prefixes dropped from element names (`<ns2:Ntry>` is `<Ntry>`).
fn without_prefixes(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let slash = rest.starts_with('/');
        if slash {
            out.push('/');
            rest = &rest[1..];
        }
        let name_end =
            rest.find(|c: char| c.is_whitespace() || c == '>' || c == '/').unwrap_or(rest.len());
        if let Some(colon) = rest[..name_end].find(':') {
            rest = &rest[colon + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// The text of the first `<tag>` inside `block` (attributes allowed on the tag).
fn element<'a>(block: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}");
    let mut from = 0;
    loop {
        let start = from + block[from..].find(&open)?;
        let after = &block[start + open.len()..];
        // `<Amt` must not find `<AmtDtls`.
        if after.starts_with(['>', ' ', '\t', '\r', '\n']) {
            let body = start + open.len() + after.find('>')? + 1;
            let end = body + block[body..].find(&format!("</{tag}>"))?;
            return Some(&block[body..end]);
        }
        from = start + open.len();
    }
}

/// An attribute of the first `<tag>` in `block`.
fn attribute<'a>(block: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    let open = format!("<{tag} ");
    let start = block.find(&open)? + open.len();
    let tag_text = &block[start..start + block[start..].find('>')?];
    let key = format!("{name}=\"");
    let value = tag_text.find(&key)? + key.len();
    Some(&tag_text[value..value + tag_text[value..].find('"')?])
}

fn line_of(text: &str, counted_to: &mut usize, line: &mut usize, offset: usize) -> usize {
    *line += text[*counted_to..offset].matches('\n').count();
    *counted_to = offset;
    *line
}

pub(crate) fn read(text: &str, default_currency: Currency) -> Result<Statement, StatementError> {
    let xml = without_prefixes(text);
    let mut statement =
        Statement { notes: vec!["ISO 20022 (camt)".into()], ..Statement::default() };
    let (mut pending, mut zero) = (0, 0);
    let (mut counted_to, mut line) = (0, 1);
    let mut from = 0;
    while let Some(found) = xml[from..].find("<Ntry>") {
        let start = from + found;
        let Some(length) = xml[start..].find("</Ntry>") else { break };
        let entry = &xml[start..start + length];
        from = start + length;
        let line = line_of(&xml, &mut counted_to, &mut line, start);
        let status = element(entry, "Sts").map(|s| element(s, "Cd").unwrap_or(s).trim());
        if status == Some("PDNG") {
            pending += 1;
            continue;
        }
        let date = ["BookgDt", "ValDt"]
            .iter()
            .filter_map(|tag| element(entry, tag))
            .find_map(|d| element(d, "Dt").or_else(|| element(d, "DtTm")))
            .and_then(|d| d.trim().get(..10))
            .and_then(|d| d.parse::<jiff::civil::Date>().ok());
        let Some(date) = date else {
            statement
                .problems
                .push(Problem { line, message: "an entry without a booking date".into() });
            continue;
        };
        let currency = attribute(entry, "Amt", "Ccy")
            .and_then(|code| Currency::parse(code).ok())
            .unwrap_or(default_currency);
        let amount =
            element(entry, "Amt").and_then(|a| amounts::parse(a, '.', currency).ok().flatten());
        let debit = element(entry, "CdtDbtInd").map(str::trim) == Some("DBIT");
        let amount_minor = match amount {
            Some(0) => {
                zero += 1;
                continue;
            }
            Some(amount) if debit => -amount.abs(),
            Some(amount) => amount.abs(),
            None => {
                statement
                    .problems
                    .push(Problem { line, message: "an entry without a readable amount".into() });
                continue;
            }
        };
        // Who the money went to or came from, then what it was for.
        let party = if debit { "Cdtr" } else { "Dbtr" };
        let name = element(entry, "RltdPties")
            .and_then(|p| element(p, party))
            .and_then(|p| element(p, "Nm"));
        let mut parts: Vec<String> = name.into_iter().map(unescape).collect();
        let mut rest = entry;
        while let Some(text) = element(rest, "Ustrd") {
            parts.push(unescape(text));
            let end = rest.find("</Ustrd>").map_or(rest.len(), |at| at + "</Ustrd>".len());
            rest = &rest[end..];
        }
        if parts.is_empty() {
            parts.extend(element(entry, "AddtlNtryInf").map(unescape));
        }
        let description = parts.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
        statement.add(line, date, amount_minor, currency, description);
    }
    statement
        .finish(&LeftOut { zero, pending, balance: 0 }, "the statement holds no entries (<Ntry>)")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const STATEMENT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
<BkToCstmrStmt><Stmt><Acct><Ccy>EUR</Ccy></Acct>
<Ntry><Amt Ccy="EUR">12.99</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
<BookgDt><Dt>2024-01-15</Dt></BookgDt><ValDt><Dt>2024-01-16</Dt></ValDt>
<NtryDtls><TxDtls><AmtDtls><InstdAmt><Amt Ccy="EUR">12.99</Amt></InstdAmt></AmtDtls>
<RltdPties><Dbtr><Nm>Ana</Nm></Dbtr><Cdtr><Nm>Netflix International B.V.</Nm></Cdtr></RltdPties>
<RmtInf><Ustrd>Abo 4411</Ustrd><Ustrd>Januar &amp; Februar</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
<Ntry><Amt Ccy="EUR">2500.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><DtTm>2024-01-25T08:00:00</DtTm></BookgDt>
<NtryDtls><TxDtls><RltdPties><Dbtr><Nm>ACME GmbH</Nm></Dbtr></RltdPties></TxDtls></NtryDtls></Ntry>
<Ntry><Amt Ccy="EUR">5.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>PDNG</Sts><BookgDt><Dt>2024-01-30</Dt></BookgDt></Ntry>
<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts></Ntry>
</Stmt></BkToCstmrStmt></Document>"#;

    #[test]
    fn entries_with_direction_status_and_details() {
        assert!(is_camt(STATEMENT));
        let statement = read(STATEMENT, Currency::parse("USD").unwrap()).unwrap();
        assert_eq!(
            statement.as_tuples(),
            vec![
                (
                    "2024-01-15".into(),
                    -1299,
                    "EUR",
                    "Netflix International B.V. Abo 4411 Januar & Februar"
                ),
                ("2024-01-25".into(), 250_000, "EUR", "ACME GmbH"),
            ]
        );
        assert_eq!(statement.problems.len(), 1, "the entry without a date");
        assert_eq!(statement.notes[1], "left out as not transactions: 1 pending or declined");
    }

    #[test]
    fn namespace_prefixes_and_documents_without_entries() {
        let prefixed =
            STATEMENT.replace("<", "<ns2:").replace("<ns2:/", "</ns2:").replace("<ns2:?", "<?");
        assert_eq!(read(&prefixed, Currency::parse("EUR").unwrap()).unwrap().transactions.len(), 2);
        let empty =
            "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\"></Document>";
        assert!(read(empty, Currency::parse("EUR").unwrap()).is_err());
        assert!(!is_camt("<OFX></OFX>"));
    }

    #[test]
    fn entities_a_document_declares_are_never_expanded() {
        // "Billion laughs": ten entities, each ten of the one before, so `&lol9;` would be
        // 10^9 "lol"s to an XML parser that expands them.
        let mut doctype = String::from("<!DOCTYPE Document [<!ENTITY lol0 \"lol\">");
        for n in 1..10 {
            let refs = format!("&lol{};", n - 1).repeat(10);
            doctype.push_str(&format!("<!ENTITY lol{n} \"{refs}\">"));
        }
        doctype.push_str("]>");
        let bomb = STATEMENT
            .replacen("\n<Document", &format!("\n{doctype}\n<Document"), 1)
            .replace("Abo 4411", "&lol9;");
        let statement = crate::read(bomb.as_bytes(), Currency::parse("EUR").unwrap()).unwrap();
        assert_eq!(statement.transactions.len(), 2);
        assert_eq!(
            statement.transactions[0].description,
            "Netflix International B.V. &lol9; Januar & Februar"
        );
    }
}
