//! Rows to transactions: find the header (anywhere, after any preamble) and the columns by
//! their names in several languages, else by what the values look like; decide the date
//! order and the decimal mark for whole columns; read the amount from one signed column,
//! from separate debit and credit columns, or unsigned with a direction column ("Af/Bij",
//! "D/K", "C/D"). Leaves out what is not a transaction, and says so in the notes: rows with a
//! zero amount, pending rows, and balance or turnover lines.
//!
//! Dates are read in `dates.rs` and amounts in `amounts.rs`.

use domain::money::Currency;

use crate::{
    LeftOut, Problem, Statement, StatementError, Transaction, amounts,
    csv::Rows,
    dates::{self, Order},
};

/// Column names, most specific first; an exact name wins over a header that contains one.
const DATE_NAMES: &[&str] = &[
    "date",
    "datum",
    "fecha",
    "data",
    "buchungstag",
    "buchungsdatum",
    "transactiedatum",
    "completed date",
    "booking date",
    "posting date",
    "posted date",
    "transaction date",
    "date de valeur",
    "buchung",
    "dato",
    "bokföringsdag",
    "transaktionsdag",
    "kirjauspäivä",
    "päivämäärä",
    "dátum",
    "tarih",
    "kuupäev",
    "booking",
    "posted",
    "valuta",
    "wertstellung",
];
const AMOUNT_NAMES: &[&str] = &[
    "amount", "betrag", "importe", "montant", "bedrag", "suma", "summe", "net", "gross", "value",
    "umsatz", "sum", "total", "beløb", "belopp", "kwota", "importo", "valor", "objem", "määrä",
    "összeg", "tutar", "částka", "iznos", "znesek", "beløp",
];
const DEBIT_NAMES: &[&str] = &[
    "debit",
    "withdrawal",
    "paid out",
    "money out",
    "soll",
    "ausgang",
    "cargo",
    "débit",
    "débito",
    "uscite",
    "ut fra konto",
    "uttag",
    "obciążenia",
    "terhelés",
    "out",
];
const CREDIT_NAMES: &[&str] = &[
    "credit",
    "deposit",
    "paid in",
    "money in",
    "haben",
    "eingang",
    "abono",
    "crédit",
    "crédito",
    "entrate",
    "inn på konto",
    "insättning",
    "uznania",
    "jóváírás",
    "in",
];
/// Columns that are never the amount although their names contain an amount word.
const NOT_AMOUNT_NAMES: &[&str] = &[
    "balance",
    "saldo",
    "kontostand",
    "solde",
    "fee",
    "gebühr",
    "original",
    "transfer amount",
    "shipping",
    "insurance",
    "tax",
    "running",
];
const DIRECTION_NAMES: &[&str] = &[
    "af bij",
    "af/bij",
    "d/k",
    "d/c",
    "c/d",
    "cr/dr",
    "dr/cr",
    "creditdebet",
    "debetcredit",
    "debit/credit",
    "credit/debit",
    "soll/haben",
    "s/h",
];
const STATUS_NAMES: &[&str] = &["status", "state", "estado", "statut", "zustand", "stato"];
const TEXT_NAMES: &[&str] = &[
    "description",
    "payee",
    "merchant",
    "name",
    "details",
    "memo",
    "narrative",
    "note",
    "verwendungszweck",
    "vwz",
    "beschreibung",
    "buchungstext",
    "umsatztext",
    "empfänger",
    "auftraggeber",
    "concepto",
    "libellé",
    "libelle",
    "reference",
    "text",
    "counterparty",
    "beneficiary",
    "omschrijving",
    "naam",
    "tegenrekeninghouder",
    "mededelingen",
    "gavėjas",
    "paaiškinimai",
    "desc",
    "counter party",
    "begünstigter",
    "beguenstigter",
    "zahlungspflichtige",
    "descrizione",
    "causale",
    "opis",
    "poznámka",
    "zpráva",
    "rubrik",
    "meddelande",
    "namn",
    "tekst",
    "beskrivelse",
    "selitys",
    "saaja",
    "viesti",
    "descrição",
    "purpose",
    "partner",
    "közlemény",
    "mottagare",
    "açıklama",
    "selgitus",
];
/// Headers that contain a text name but hold identifiers or states, not words about the
/// transaction.
const NOT_TEXT_NAMES: &[&str] = &[
    "status", "state", "email", "e-mail", "iban", "bic", "address", "adresse", "account", " id",
    "id ",
];
const CURRENCY_NAMES: &[&str] = &[
    "currency",
    "währung",
    "waehrung",
    "moneda",
    "devise",
    "divisa",
    "ccy",
    "valutacode",
    "monn",
    "munt",
    "měna",
    "valuta kod",
];

/// Status words of a transaction not booked: not yet, or never (declined, reverted).
const PENDING: &[&str] = &[
    "pending",
    "vorgemerkt",
    "pendiente",
    "en attente",
    "in behandeling",
    "in attesa",
    "pendente",
    "venter",
    "declined",
    "reverted",
    "failed",
    "cancelled",
    "canceled",
    "rejected",
    "abgelehnt",
    "reserverad",
    "reservert",
    "en cours",
    "non contabilizzato",
];
/// Lines of balances and totals, not transactions: a description (or a first cell) that
/// starts with one of these phrases of several words, or that is one of the single words,
/// perhaps followed by a date or an amount.
const BALANCE_PHRASES: &[&str] = &[
    "opening balance",
    "closing balance",
    "beginning balance",
    "ending balance",
    "balance brought forward",
    "balance carried forward",
    "brought forward",
    "carried forward",
    "alter kontostand",
    "neuer kontostand",
    "saldo inicial",
    "saldo final",
    "saldo anterior",
    "solde initial",
    "solde final",
    "ancien solde",
    "nouveau solde",
    "likutis pradžiai",
    "likutis pabaigai",
];
const BALANCE_WORDS: &[&str] = &[
    "balance",
    "total",
    "anfangssaldo",
    "endsaldo",
    "kontostand",
    "saldo",
    "beginsaldo",
    "eindsaldo",
    "apyvarta",
];

/// Which way money moved, from a direction cell: `Some(true)` in, `Some(false)` out.
fn direction(value: &str) -> Option<bool> {
    match value.trim().to_lowercase().as_str() {
        "c" | "k" | "cr" | "credit" | "kredit" | "bij" | "h" | "haben" | "+" => Some(true),
        "d" | "db" | "dr" | "debit" | "debet" | "af" | "s" | "soll" | "-" => Some(false),
        _ => None,
    }
}

/// Whether a text starts with a balance phrase ("Opening balance 01.01.2026").
fn has_balance_phrase(text: &str) -> bool {
    let lower = text.trim().to_lowercase();
    BALANCE_PHRASES.iter().any(|phrase| {
        lower.strip_prefix(phrase).is_some_and(|rest| !rest.starts_with(char::is_alphabetic))
    })
}

/// Whether a row is a balance or total line: a cell of its text starts with a balance phrase,
/// its whole description is a balance word ("Saldo", "Total 31.01."; not a payee called
/// "TOTAL" with a purpose beside it), or its first cell is either (a footer in the date
/// column).
fn is_balance_line(first_cell: &str, text_cells: &[&str], description: &str) -> bool {
    let is_word = |text: &str| {
        let lower = text.trim().to_lowercase();
        BALANCE_WORDS.iter().any(|word| {
            lower.strip_prefix(word).is_some_and(|rest| !rest.chars().any(char::is_alphabetic))
        })
    };
    has_balance_phrase(first_cell)
        || is_word(first_cell) && !first_cell.is_empty()
        || text_cells.iter().any(|cell| has_balance_phrase(cell))
        || is_word(description) && !description.is_empty()
}

/// Whether a cell holds words: a run of three letters or more, and not one token with many
/// digits in it (an IBAN, a reference).
fn is_wordy(value: &str) -> bool {
    let longest_run =
        value.split(|c: char| !c.is_alphabetic()).map(|run| run.chars().count()).max().unwrap_or(0);
    let one_token = !value.trim().contains(char::is_whitespace);
    let digits = value.chars().filter(char::is_ascii_digit).count();
    longest_run >= 3 && !(one_token && digits >= 5)
}

/// The description of a row: its text cells, with runs of spaces and line breaks made one
/// space and the quotes a spreadsheet puts around text dropped.
fn describe(cells: &[&str]) -> String {
    let joined = cells
        .iter()
        .map(|cell| {
            let cell = cell.trim();
            cell.strip_prefix('\'').map_or(cell, |rest| rest.strip_suffix('\'').unwrap_or(rest))
        })
        .filter(|cell| !cell.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    joined.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_currency(value: &str) -> bool {
    value.len() == 3
        && value.chars().all(|c| c.is_ascii_uppercase())
        && Currency::parse(value).is_ok()
}

#[derive(Debug)]
struct Columns {
    date: usize,
    amount: Option<usize>,
    debit: Option<usize>,
    credit: Option<usize>,
    direction: Option<usize>,
    status: Option<usize>,
    text: Vec<usize>,
    currency: Option<usize>,
}

impl Columns {
    fn taken(&self) -> Vec<usize> {
        [
            Some(self.date),
            self.amount,
            self.debit,
            self.credit,
            self.direction,
            self.status,
            self.currency,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// The most columns looked at: a header's, or this many in a file without one. A row of a
/// million empty fields costs no more than a row of these.
const MAX_COLUMNS: usize = 256;

/// The data under a header: column `i` of every row.
struct Data<'a> {
    rows: Vec<&'a (usize, Vec<String>)>,
    currency: Currency,
    /// The columns looked at.
    width: usize,
}

impl<'a> Data<'a> {
    fn new(
        rows: Vec<&'a (usize, Vec<String>)>,
        currency: Currency,
        header: Option<&[String]>,
    ) -> Self {
        let widest = rows.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
        let width = header.map_or(widest, <[String]>::len).min(widest).min(MAX_COLUMNS);
        Self { rows, currency, width }
    }

    fn column(&self, i: usize) -> Vec<&str> {
        self.rows.iter().map(|(_, row)| value(row, Some(i))).collect()
    }

    fn width(&self) -> usize {
        self.width
    }

    /// How many cells of a column are amounts other than zero.
    fn amounts(&self, i: usize) -> usize {
        let values = self.column(i);
        let mark = amounts::decimal_mark(&values);
        values
            .iter()
            .filter(|v| matches!(amounts::parse(v, mark, self.currency), Ok(Some(n)) if n != 0))
            .count()
    }

    /// Whether column `i` is a running balance of amount column `amount`: from one row to the
    /// next it changes by one of the two rows' amounts (balance after or before, in either
    /// date order).
    fn is_balance_of(&self, i: usize, amount: usize) -> bool {
        // The first rows tell; a long statement need not be read through for it.
        let read = |column: usize| -> Vec<Option<i64>> {
            let values: Vec<&str> = self.column(column).into_iter().take(2000).collect();
            let mark = amounts::decimal_mark(&values);
            values.iter().map(|v| amounts::parse(v, mark, self.currency).ok().flatten()).collect()
        };
        let (balances, amounts) = (read(i), read(amount));
        let mut fits = 0;
        let mut pairs = 0;
        for at in 1..balances.len() {
            if let (Some(before), Some(after)) = (balances[at - 1], balances[at]) {
                pairs += 1;
                let change = after - before;
                let near = [amounts[at], amounts[at - 1]];
                if near.iter().flatten().any(|&a| a == change || a == -change) {
                    fits += 1;
                }
            }
        }
        pairs > 0 && fits * 2 >= pairs
    }

    /// The column whose cells are all currency codes.
    fn currency_column(&self, taken: &[usize]) -> Option<usize> {
        (0..self.width()).filter(|i| !taken.contains(i)).find(|&i| {
            let values: Vec<&str> = self.column(i).into_iter().filter(|v| !v.is_empty()).collect();
            !values.is_empty() && values.iter().all(|v| is_currency(v))
        })
    }

    /// The column whose cells all say a direction, both ways.
    fn direction_column(&self, taken: &[usize]) -> Option<usize> {
        (0..self.width()).filter(|i| !taken.contains(i)).find(|&i| {
            let values: Vec<&str> = self.column(i).into_iter().filter(|v| !v.is_empty()).collect();
            let ways: Vec<Option<bool>> = values.iter().map(|v| direction(v)).collect();
            // Words, or one of the letter pairs banks use (S/H, D/C, D/K); not signs or other
            // single letters, which could be codes.
            let letters_of_a_pair = values.iter().all(|v| v.len() == 1)
                && [["S", "H"], ["D", "C"], ["D", "K"]].iter().any(|pair| {
                    values.iter().all(|v| pair.iter().any(|p| v.eq_ignore_ascii_case(p)))
                });
            (letters_of_a_pair || values.iter().all(|v| v.len() >= 2 && !v.starts_with(['+', '-'])))
                && ways.iter().all(Option::is_some)
                && ways.contains(&Some(true))
                && ways.contains(&Some(false))
        })
    }

    /// Text columns by what they hold: letters in most rows, and not mostly numbers (account
    /// numbers, references); one that is the same in every row (the account's name) only
    /// when no other is found.
    fn text_columns(&self, taken: &[usize]) -> Vec<usize> {
        let varies = |i: usize| {
            let values = self.column(i);
            values.iter().any(|v| Some(v) != values.first())
        };
        let mut found: Vec<usize> = (0..self.width())
            .filter(|i| !taken.contains(i))
            .filter(|&i| {
                let values = self.column(i);
                let wordy = values.iter().filter(|v| is_wordy(v)).count();
                wordy * 2 > values.len()
            })
            .collect();
        if found.iter().any(|&i| varies(i)) {
            found.retain(|&i| varies(i));
        }
        found
    }
}

/// The first column whose header is one of `names`, exactly, else one containing a name;
/// names earlier in the list first, columns in `taken` skipped.
fn find(header: &[String], names: &[&str], taken: &[usize]) -> Option<usize> {
    let lower: Vec<String> = header.iter().map(|h| h.to_lowercase()).collect();
    names
        .iter()
        .find_map(|name| lower.iter().position(|h| h == name).filter(|i| !taken.contains(i)))
        .or_else(|| {
            names.iter().find_map(|name| {
                lower
                    .iter()
                    .enumerate()
                    .position(|(i, h)| !taken.contains(&i) && name.len() > 2 && h.contains(name))
            })
        })
}

/// Every column whose header names an amount, best name first.
fn amount_candidates(header: &[String], taken: &[usize]) -> Vec<usize> {
    let lower: Vec<String> = header.iter().map(|h| h.to_lowercase()).collect();
    let excluded = |h: &str| {
        NOT_AMOUNT_NAMES.iter().any(|n| h.contains(n))
            // "Value Date", "Data valor": a date, whatever else it says.
            || ["date", "datum", "data", "fecha", "dato"].iter().any(|n| h.contains(n))
            || DEBIT_NAMES.iter().chain(CREDIT_NAMES).any(|n| n.len() > 2 && h.contains(n))
    };
    let mut found = Vec::new();
    for exact in [true, false] {
        for name in AMOUNT_NAMES {
            for (i, h) in lower.iter().enumerate() {
                let fits = if exact { h == name } else { name.len() > 2 && h.contains(name) };
                if fits && !excluded(h) && !taken.contains(&i) && !found.contains(&i) {
                    found.push(i);
                }
            }
        }
    }
    found
}

/// Whether a row is a header: it names a date column and an amount, and holds no date.
fn is_header(row: &[String]) -> bool {
    row.len() <= MAX_COLUMNS
        && find(row, DATE_NAMES, &[]).is_some()
        && (!amount_candidates(row, &[]).is_empty()
            || find(row, DEBIT_NAMES, &[]).is_some()
            || find(row, CREDIT_NAMES, &[]).is_some())
        && !row.iter().any(|cell| {
            [Order::DayMonthYear, Order::YearMonthDay]
                .iter()
                .any(|&o| dates::parse(cell, o).is_some())
        })
}

/// Columns by header names, checked against the data under them.
fn by_names(header: &[String], data: &Data<'_>) -> Option<Columns> {
    let date = find(header, DATE_NAMES, &[])?;
    // The amount column with the most amounts in it, the best-named on a tie; one with none
    // only when there are no debit and credit columns instead (its rows then say why).
    let best = amount_candidates(header, &[date])
        .into_iter()
        .enumerate()
        .max_by_key(|&(rank, i)| (data.amounts(i), std::cmp::Reverse(rank)))
        .map(|(_, i)| i);
    let has_debit_or_credit = find(header, DEBIT_NAMES, &[date]).is_some()
        || find(header, CREDIT_NAMES, &[date]).is_some();
    let amount = best.filter(|&i| data.amounts(i) > 0 || !has_debit_or_credit);
    let taken: Vec<usize> = [Some(date), amount].into_iter().flatten().collect();
    let direction = find(header, DIRECTION_NAMES, &taken);
    let taken: Vec<usize> = taken.into_iter().chain(direction).collect();
    let (debit, credit) = if amount.is_none() {
        let debit = find(header, DEBIT_NAMES, &taken);
        let mut with_debit = taken;
        with_debit.extend(debit);
        (debit, find(header, CREDIT_NAMES, &with_debit))
    } else {
        (None, None)
    };
    if amount.is_none() && debit.is_none() && credit.is_none() {
        return None;
    }
    let mut columns = Columns {
        date,
        amount,
        debit,
        credit,
        direction,
        status: None,
        text: Vec::new(),
        currency: None,
    };
    columns.status = find(header, STATUS_NAMES, &columns.taken());
    columns.currency = find(header, CURRENCY_NAMES, &columns.taken())
        .or_else(|| data.currency_column(&columns.taken()));
    if columns.direction.is_none() {
        columns.direction = data.direction_column(&columns.taken());
    }
    let lower: Vec<String> = header.iter().map(|h| h.to_lowercase()).collect();
    let taken = columns.taken();
    let mut text: Vec<usize> = TEXT_NAMES
        .iter()
        .flat_map(|name| {
            lower.iter().enumerate().filter(move |(_, h)| h.contains(name)).map(|(i, _)| i)
        })
        .filter(|&i| {
            let padded = format!(" {} ", lower[i]);
            !taken.contains(&i)
                && !NOT_TEXT_NAMES.iter().any(|n| padded.contains(n))
                && data.column(i).iter().any(|v| !v.is_empty())
        })
        .collect();
    if text.is_empty() {
        text = data.text_columns(&taken);
    }
    // In the file's order: the payee usually comes before the purpose.
    text.sort_unstable();
    text.dedup();
    columns.text = text;
    Some(columns)
}

/// Columns by what the values look like, for files without a header.
fn by_values(data: &Data<'_>) -> Option<Columns> {
    let width = data.width();
    let date = (0..width).max_by_key(|&i| dates::decide(&data.column(i)).map_or(0, |f| f.1))?;
    dates::decide(&data.column(date))?;
    // Money has a decimal mark; counters and references do not.
    let money_shaped = |i: usize| {
        data.column(i)
            .iter()
            .filter(|v| v.rfind([',', '.']).is_some_and(|at| (1..=2).contains(&(v.len() - at - 1))))
            .count()
    };
    let mut money: Vec<usize> = (0..width)
        .filter(|&i| i != date && data.amounts(i) * 2 > data.rows.len() && money_shaped(i) > 0)
        .collect();
    // Statements have an amount and a balance or two: the few columns most like money are
    // compared with each other, not every pair of a wide file's columns.
    money.sort_by_key(|&i| std::cmp::Reverse(money_shaped(i)));
    money.truncate(8);
    money.sort_unstable();
    // A running balance beside the amount is not the amount.
    let balances: Vec<usize> = money
        .iter()
        .copied()
        .filter(|&b| money.iter().any(|&a| a != b && data.is_balance_of(b, a)))
        .collect();
    if balances.len() < money.len() {
        money.retain(|i| !balances.contains(i));
    }
    let amount = money.into_iter().max_by_key(|&i| {
        let negatives = data.column(i).iter().filter(|v| v.contains('-')).count();
        (money_shaped(i), negatives > 0, std::cmp::Reverse(i))
    })?;
    let mut columns = Columns {
        date,
        amount: Some(amount),
        debit: None,
        credit: None,
        direction: None,
        status: None,
        text: Vec::new(),
        currency: None,
    };
    columns.currency = data.currency_column(&columns.taken());
    columns.direction = data.direction_column(&columns.taken());
    columns.text = data.text_columns(&columns.taken());
    Some(columns)
}

/// Field `i` of a row, or "" when the row is short or there is no such column.
fn value(row: &[String], i: Option<usize>) -> &str {
    i.and_then(|i| row.get(i)).map(String::as_str).unwrap_or("")
}

/// Rows shorter than the header whose amounts stand where the header's amount column would be
/// counted from the right (the bank wrote one field where its header has several): the rows
/// with the missing fields put back after the date. `None` when the rows fit the header.
fn realigned(header: &[String], rows: &[(usize, Vec<String>)], currency: Currency) -> Option<Rows> {
    let date = find(header, DATE_NAMES, &[])?;
    let mut money = amount_candidates(header, &[date]);
    money.extend(find(header, DEBIT_NAMES, &[date]));
    money.extend(find(header, CREDIT_NAMES, &[date]));
    let short: Vec<&(usize, Vec<String>)> =
        rows.iter().filter(|(_, row)| row.len() < header.len()).collect();
    if short.len() * 2 <= rows.len() {
        return None;
    }
    let is_amount = |cell: Option<&String>| {
        cell.is_some_and(|c| {
            let mark = amounts::decimal_mark(&[c.as_str()]);
            matches!(amounts::parse(c, mark, currency), Ok(Some(n)) if n != 0)
        })
    };
    let (mut left, mut right) = (0, 0);
    for (_, row) in &short {
        let shift = header.len() - row.len();
        for &i in money.iter().filter(|&&i| i > date + shift) {
            left += usize::from(is_amount(row.get(i)));
            right += usize::from(is_amount(row.get(i - shift)));
        }
    }
    (right > left).then(|| {
        rows.iter()
            .map(|(line, row)| {
                let mut row = row.clone();
                if row.len() < header.len() && row.len() > date {
                    let missing = header.len() - row.len();
                    row.splice(date + 1..date + 1, std::iter::repeat_n(String::new(), missing));
                }
                (*line, row)
            })
            .collect()
    })
}

pub(crate) fn read(rows: &Rows, default_currency: Currency) -> Result<Statement, StatementError> {
    // The header is the first row that names a date column and an amount; banks put account
    // details, export dates and notices above it.
    let header_at = rows.iter().position(|(_, row)| is_header(row));
    let realigned =
        header_at.and_then(|at| realigned(&rows[at].1, &rows[at + 1..], default_currency));
    let (columns, data) = match header_at {
        Some(at) => {
            let under: Vec<&(usize, Vec<String>)> = match &realigned {
                Some(rows) => rows.iter().collect(),
                None => rows[at + 1..].iter().collect(),
            };
            let data = Data::new(under, default_currency, Some(&rows[at].1));
            let columns = by_names(&rows[at].1, &data).ok_or_else(|| {
                StatementError::NoTable(
                    "the header names a date and an amount, but no row under it has an amount"
                        .into(),
                )
            })?;
            (columns, data)
        }
        None => {
            let data = Data::new(rows.iter().collect(), default_currency, None);
            let columns = by_values(&data).ok_or_else(|| {
                StatementError::NoTable("no column of dates and amounts. Export the statement as CSV with a date and an amount per row.".into())
            })?;
            (columns, data)
        }
    };
    let date_values = data.column(columns.date);
    let Some((order, _)) = dates::decide(&date_values) else {
        return Err(StatementError::NoTable(
            "the date column holds no dates Exhale can read".into(),
        ));
    };
    let format_name = date_values
        .iter()
        .find(|v| dates::parse(v, order).is_some())
        .map(|v| dates::pattern(v, order))
        .unwrap_or_default();
    let money_columns: Vec<usize> =
        [columns.amount, columns.debit, columns.credit].into_iter().flatten().collect();
    let amount_values: Vec<&str> = data
        .rows
        .iter()
        .flat_map(|(_, row)| money_columns.iter().map(|&i| value(row, Some(i))))
        .collect();
    let mark = amounts::decimal_mark(&amount_values);
    let mut statement = Statement::default();
    statement.notes.push(format!(
        "dates {format_name}, decimal {}{}{}",
        if mark == ',' { "comma" } else { "point" },
        if columns.amount.is_none() { ", separate debit and credit columns" } else { "" },
        if columns.direction.is_some() { ", a column for the direction" } else { "" },
    ));
    if realigned.is_some() {
        statement.notes.push("rows shorter than the header: read from the right".into());
    }
    if let Some(other) = dates::ambiguous(&date_values, order) {
        statement.notes.push(format!(
            "every day is 12 or less: the dates could also be {}",
            dates::pattern(
                date_values
                    .iter()
                    .find(|v| dates::parse(v, other).is_some())
                    .copied()
                    .unwrap_or(""),
                other
            )
        ));
    }
    let mut left_out = LeftOut::default();
    for (line, row) in &data.rows {
        let line = *line;
        let date_text = value(row, Some(columns.date));
        let amount_texts: Vec<&str> = money_columns.iter().map(|&i| value(row, Some(i))).collect();
        if date_text.is_empty() && amount_texts.iter().all(|t| t.is_empty()) {
            continue; // a title, a summary or a notice between the rows
        }
        let cells: Vec<&str> = columns.text.iter().map(|&i| value(row, Some(i))).collect();
        let description = describe(&cells);
        let first_cell = row.iter().find(|cell| !cell.is_empty()).map_or("", String::as_str);
        if is_balance_line(first_cell, &cells, &description) {
            left_out.balance += 1;
            continue;
        }
        let status = value(row, columns.status).to_lowercase();
        if PENDING.contains(&status.as_str()) {
            left_out.pending += 1;
            continue;
        }
        let Some(date) = dates::parse(date_text, order) else {
            statement.problems.push(Problem {
                line,
                message: format!("“{date_text}” is not a date ({format_name})"),
            });
            continue;
        };
        let currency = match value(row, columns.currency) {
            "" => default_currency,
            code => match Currency::parse(&code.to_uppercase()) {
                Ok(currency) => currency,
                Err(_) => {
                    statement.problems.push(Problem {
                        line,
                        message: format!("“{code}” is not a currency code"),
                    });
                    continue;
                }
            },
        };
        let amount = match columns.amount {
            Some(i) => amounts::parse(value(row, Some(i)), mark, currency),
            None => {
                let debit = amounts::parse(value(row, columns.debit), mark, currency);
                let credit = amounts::parse(value(row, columns.credit), mark, currency);
                match (debit, credit) {
                    (Ok(debit), Ok(credit)) => Ok(match (debit, credit) {
                        (None, None) => None,
                        (d, c) => Some(c.unwrap_or(0).abs() - d.unwrap_or(0).abs()),
                    }),
                    (Err(err), _) | (_, Err(err)) => Err(err),
                }
            }
        };
        let amount_minor = match amount {
            Ok(Some(0)) => {
                left_out.zero += 1;
                continue;
            }
            Ok(Some(amount)) => match direction(value(row, columns.direction)) {
                Some(true) => amount.abs(),
                Some(false) => -amount.abs(),
                None => amount,
            },
            Ok(None) => {
                statement.problems.push(Problem { line, message: "no amount".into() });
                continue;
            }
            Err(message) => {
                statement.problems.push(Problem { line, message });
                continue;
            }
        };
        statement.add(line, date, amount_minor, currency, description);
    }
    // Card statements list purchases as positive amounts: a file with nothing but money
    // "coming in", or whose only money going out is repayments of the card, is a card's.
    let unsigned = columns.amount.is_some() && columns.direction.is_none();
    let (spent, paid): (Vec<&Transaction>, Vec<&Transaction>) =
        statement.transactions.iter().partition(|t| t.amount_minor > 0);
    // Read only when the counts leave it open: the words of every description are slow to
    // look through in a statement of 100,000 rows.
    let any_repayment = || {
        paid.iter()
            .any(|t| crate::merchant::not_a_subscription(&t.description) == Some("card repayment"))
    };
    // A file of money coming in only is a card's when it says so (a card column, masked card
    // numbers); otherwise it could be savings.
    let card_hint = header_at.is_some_and(|at| {
        rows[at].1.iter().any(|h| {
            let h = h.to_lowercase();
            ["card", "karte", "tarjeta", "carte", "kaart"].iter().any(|w| h.contains(w))
        })
    }) || data.rows.iter().take(50).any(|(_, row)| {
        row.iter().any(|cell| cell.contains("****") || cell.to_uppercase().contains("XXXX"))
    });
    let card = unsigned
        && spent.len() >= 2
        && ((paid.is_empty() && card_hint) || (spent.len() >= 2 * paid.len() && any_repayment()));
    if card {
        for transaction in &mut statement.transactions {
            transaction.amount_minor = -transaction.amount_minor;
        }
        statement.notes.push(
            "purchases are positive, as card statements list them: read as money spent".into(),
        );
    }
    statement.finish(&left_out, "the file has a header but no rows with an amount")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::split;

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    fn read_text(text: &str) -> Statement {
        read(&split(text).0, eur()).unwrap()
    }

    fn amounts_of(statement: &Statement) -> Vec<i64> {
        statement.transactions.iter().map(|t| t.amount_minor).collect()
    }

    #[test]
    fn the_date_format_is_decided_by_the_whole_column() {
        let text = "Date,Description,Amount\n03/04/2026,A,-1\n13/04/2026,B,-2\n";
        let statement = read_text(text);
        assert_eq!(statement.transactions[0].date, jiff::civil::date(2026, 4, 3));
        let text = "Date,Description,Amount\n03/04/2026,A,-1\n04/13/2026,B,-2\n";
        assert_eq!(read_text(text).transactions[0].date, jiff::civil::date(2026, 3, 4));
    }

    #[test]
    fn headers_in_the_languages_of_european_banks() {
        for (text, currency) in [
            (
                "Bokföringsdag;Belopp;Valuta;Mottagare\n2024-01-15;-129,00;SEK;Spotify\n2024-01-16;25 000,00;SEK;Lön\n",
                "SEK",
            ),
            (
                "Dátum;Összeg;Pénznem;Partner\n2024.01.15;-4 990;HUF;Netflix\n2024.01.16;450 000;HUF;Fizetés\n",
                "HUF",
            ),
            (
                "Data operacji;Opis;Kwota\n15.01.2024;Netflix;-43,00\n16.01.2024;Wynagrodzenie;5 000,00\n",
                "EUR",
            ),
        ] {
            let statement = read_text(text);
            assert_eq!(statement.transactions.len(), 2, "{text}: {statement:?}");
            let first = &statement.transactions[0];
            assert!(
                first.amount_minor < 0 && first.currency.code() == currency,
                "{text}: {first:?}"
            );
            assert!(!first.description.is_empty(), "{text}");
        }
    }

    #[test]
    fn a_german_export_with_account_lines_above_the_header() {
        let text = "Kontonummer;DE12 3456\nZeitraum;01.01.2026 - 31.03.2026\n\nBuchungstag;Wertstellung;Auftraggeber / Empfänger;Verwendungszweck;Betrag;Währung\n02.01.2026;02.01.2026;NETFLIX.COM;Abo 123;-13,99;EUR\n05.01.2026;05.01.2026;Arbeitgeber GmbH;Gehalt;2.500,00;EUR\n31.02.2026;31.02.2026;Broken;x;-1,00;EUR\n";
        let statement = read_text(text);
        assert_eq!(statement.transactions.len(), 2);
        assert_eq!(statement.transactions[0].amount_minor, -1399);
        assert_eq!(statement.transactions[0].description, "NETFLIX.COM Abo 123");
        assert_eq!(statement.transactions[1].amount_minor, 250_000);
        assert_eq!(statement.problems.len(), 1, "31 February does not exist");
        assert_eq!(statement.problems[0].line, 7);
        assert!(statement.notes[0].contains("dd.mm.yyyy") && statement.notes[0].contains("comma"));
    }

    #[test]
    fn a_preamble_of_ten_thousand_lines_before_the_header() {
        let mut text = String::new();
        for n in 0..10_000 {
            text.push_str(&format!("Last update: export {n}; account DE12 3456\n"));
        }
        text.push_str("Date;Text;Amount\n2026-01-02;Netflix;-12,99\n");
        let statement = read_text(&text);
        assert_eq!(amounts_of(&statement), vec![-1299]);
        // Ten thousand lines of nothing but preamble: a reason, not a guess.
        let preamble_only: String = text.lines().take(10_000).map(|l| format!("{l}\n")).collect();
        let err = read(&split(&preamble_only).0, eur()).unwrap_err();
        assert!(matches!(err, StatementError::NoTable(_)), "{err:?}");
    }

    #[test]
    fn separate_debit_and_credit_columns_and_a_currency_column() {
        let text = "Date,Details,Money out,Money in,Currency\n2026-01-03,Spotify,9.99,,GBP\n2026-01-04,Refund,,4.00,GBP\n2026-01-05,Odd,12x,,GBP\n";
        let statement = read_text(text);
        assert_eq!(statement.transactions[0].amount_minor, -999);
        assert_eq!(statement.transactions[0].currency.code(), "GBP");
        assert_eq!(statement.transactions[1].amount_minor, 400);
        assert_eq!(statement.problems.len(), 1);
        // After a byte-order mark, with "Debit Amount" and "Credit Amount" and an empty
        // "Transfer Amount".
        let text = "\u{feff}Date,Description,Credit Amount,Debit Amount,Transfer Amount\n05/03/2021,Pay,,100,\n06/03/2021,Get,120,,\n";
        assert_eq!(amounts_of(&read_text(text)), vec![-10000, 12000]);
        // An amount column left empty beside debit and credit columns that are filled.
        let text = "Buchungstag;Verwendungszweck;Betrag;Soll;Haben;Währung\n02.01.2026;Netflix;;-13,99;;EUR\n03.01.2026;Gehalt;;;2.500,00;EUR\n";
        assert_eq!(amounts_of(&read_text(text)), vec![-1399, 250_000]);
    }

    #[test]
    fn unsigned_amounts_with_a_direction_column() {
        let text = "\"Datum\",\"Naam / Omschrijving\",\"Af Bij\",\"Bedrag (EUR)\"\n\"20200213\",\"Kosten\",\"Af\",\"1,25\"\n\"20200214\",\"Terug\",\"Bij\",\"2,50\"\n";
        let statement = read_text(text);
        assert_eq!(amounts_of(&statement), vec![-125, 250]);
        assert_eq!(statement.transactions[0].description, "Kosten");
        // A column of S and H with no name.
        let text =
            "Buchungstag;Text;;Umsatz\n02.01.2026;Netflix;S;13,99\n03.01.2026;Gehalt;H;2.500,00\n";
        assert_eq!(amounts_of(&read_text(text)), vec![-1399, 250_000]);
        // Named nothing recognisable, found by its values.
        let text = "Date;Who;Way;Amount\n2026-01-02;Shop;DEBIT;5,00\n2026-01-03;Boss;CREDIT;9,00\n";
        assert_eq!(amounts_of(&read_text(text)), vec![-500, 900]);
    }

    #[test]
    fn zero_pending_and_balance_rows_are_not_transactions() {
        let text = "Date,Description,Amount,State\n2026-01-01,Opening balance,100.00,\n2026-01-02,Netflix,-12.99,COMPLETED\n2026-01-03,Hold,0.00,COMPLETED\n2026-01-04,Shop,-5.00,PENDING\n2026-01-31,Closing balance 31.01.2026,87.01,\n";
        let statement = read_text(text);
        assert_eq!(amounts_of(&statement), vec![-1299]);
        assert!(
            statement.notes.iter().any(|n| n
                == "left out as not transactions: 1 with a zero amount, 1 pending or declined, 2 balance or total lines"),
            "{:?}",
            statement.notes
        );
        // A value date beside the booking date is a date, not the amount.
        let text = "Booking Date,Value Date,Description,Amount\n2024-01-02,2024-01-02,NETFLIX,-15.49\n2024-01-03,2024-01-03,Hold,0.00\n";
        assert_eq!(amounts_of(&read_text(text)), vec![-1549]);
        // A bank's summary above the rows, and a footer in the date column.
        let text = "Date,Description,Amount,Running Bal.\n01/01/2024,Beginning balance as of 01/01/2024,,\"1,234.56\"\n01/02/2024,NETFLIX.COM,-15.49,\"1,219.07\"\nKontostand,31.01.2024,,1.219\n";
        let statement = read_text(text);
        assert_eq!(
            (amounts_of(&statement), statement.problems.len()),
            (vec![-1549], 0),
            "{statement:?}"
        );
        // A payee named like a balance word, with a purpose beside it, is a transaction.
        let text = "Date;Payee;Purpose;Amount\n2026-01-02;TOTAL;Station 4411;-40,00\n2026-01-03;Rewe;Markt;-3,00\n";
        assert_eq!(amounts_of(&read_text(text)), vec![-4000, -300]);
        // "Balance transfer" is a transaction.
        let text = "Date,Description,Amount\n2026-01-02,Balance transfer fee,-3.00\n2026-01-03,Shop,4.00\n";
        assert_eq!(read_text(text).transactions.len(), 2);
    }

    #[test]
    fn month_names_glued_symbols_and_header_cells_with_spaces() {
        let text = "Date, Description, Amount\n12-Jan-2024, Tesco, £12.00\n13 Jan 24, Refund, -£5.00\n14. Januar 2024, Lidl, 12.50\n";
        let statement = read_text(text);
        assert_eq!(amounts_of(&statement), vec![1200, -500, 1250]);
        assert_eq!(statement.transactions[2].date, jiff::civil::date(2024, 1, 14));
        let text = "Datum;Text;Betrag\n2024:01:12;A;-€5,00\n2024:01:13;B;12,00 €\n";
        assert_eq!(amounts_of(&read_text(text)), vec![-500, 1200]);
        let text = "Date,Description,Amount\n12-Foo-2024,A,-1.00\n13-Jan-2024,B,-2.00\n";
        let statement = read_text(text);
        assert_eq!(amounts_of(&statement), vec![-200]);
        assert!(statement.problems[0].message.contains("12-Foo-2024"), "{:?}", statement.problems);
    }

    #[test]
    fn purchases_as_positive_amounts_are_money_spent() {
        let text = "Merchant Name,Card Used,Date,Amount\nMobil,**** 1234,01/10/2019,36.33\nITUNES,**** 1234,12/15/2018,13.98\n";
        let statement = read_text(text);
        assert_eq!(amounts_of(&statement), vec![-3633, -1398]);
        // Money coming in only, with nothing to say it is a card's: savings.
        let text = "Date,Description,Amount\n2024-01-31,Interest,1.20\n2024-02-01,Transfer from John,200.00\n";
        assert_eq!(amounts_of(&read_text(text)), vec![120, 20000]);
        assert!(statement.notes.iter().any(|n| n.contains("purchases are positive")));
        // A card's purchases with its repayments negative.
        let text = "Date,Description,Amount\n01/10/2024,NETFLIX.COM,15.49\n01/12/2024,SHELL OIL,40.00\n01/14/2024,AMAZON REFUND,-12.00\n01/15/2024,TESCO,8.00\n01/16/2024,LIDL,9.00\n01/20/2024,AUTOPAY PAYMENT - THANK YOU,-55.49\n";
        assert_eq!(amounts_of(&read_text(text)), vec![-1549, -4000, 1200, -800, -900, 5549]);
        // A bank account with a refund is not.
        let text = "Date,Description,Amount\n01/10/2024,SALARY,1500.00\n01/12/2024,BONUS,40.00\n01/20/2024,NETFLIX.COM,-15.49\n";
        assert_eq!(amounts_of(&read_text(text)), vec![150_000, 4000, -1549]);
    }

    #[test]
    fn files_without_a_header_are_read_by_their_values() {
        let statement = read_text("2026-01-02,AMAZON PRIME,-8.99\n2026-02-02,AMAZON PRIME,-8.99\n");
        assert_eq!(statement.transactions.len(), 2);
        assert_eq!(statement.transactions[1].description, "AMAZON PRIME");
        // The balance before each transaction stands before its amount; the amount is the
        // column the balance moves by.
        let text = "17-06-2022,NL00,Shop A,EUR,130.44,EUR,-20.00,17\n18-06-2022,NL00,Shop B,EUR,110.44,EUR,-2.20,18\n19-06-2022,NL00,Boss,EUR,108.24,EUR,503.15,19\n";
        let statement = read_text(text);
        assert_eq!(amounts_of(&statement), vec![-2000, -220, 50315]);
        assert_eq!(statement.transactions[0].description, "Shop A");
    }

    #[test]
    fn ragged_rows_are_reported_and_the_rest_still_read() {
        let text = "Date,Description,Amount\n2026-01-02,Netflix,-12.99\n2026-01-03\n2026-01-04,Only two\n2026-01-05,Spotify,-9.99,extra,fields\n";
        let statement = read_text(text);
        assert_eq!(statement.transactions.len(), 2, "{statement:?}");
        let lines: Vec<usize> = statement.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![3, 4]);
        assert!(statement.problems.iter().all(|p| p.message == "no amount"));
    }

    #[test]
    fn an_amount_column_without_amounts_says_why_per_row() {
        let err =
            read(&split("Date,Description,Amount\n2026-01-01,A,12abc\n").0, eur()).unwrap_err();
        assert_eq!(err, StatementError::NoTable("line 2: “12abc” is not an amount".into()));
    }

    #[test]
    fn a_table_without_dates_or_amounts_is_refused_with_a_reason() {
        let err = read(&split("name,colour\nx,red\n").0, eur()).unwrap_err();
        assert!(matches!(err, StatementError::NoTable(_)), "{err:?}");
    }
}
