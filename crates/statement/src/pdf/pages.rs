//! The loaded document made ready for pdf-extract, and the work of reading its pages bounded
//! before it starts. pdf-extract expands a stream each time it uses it, parses a page's
//! content whole, draws a form again for each use and recurses into forms it draws, and
//! builds a font's code map for each content stream that selects it. So first:
//!
//! - every stream is expanded once, within `MAX_STREAM_BYTES` each and `MAX_EXPANDED_BYTES`
//!   together, and kept expanded; what text never needs (images, colour profiles, TrueType
//!   programs, metadata) is emptied instead, so a scan costs nothing to look at;
//! - each page's work is counted as pdf-extract will do it: the content it parses (within
//!   `MAX_PAGE_CONTENT` at once), each form as often as its name appears (a bound on how often
//!   it is drawn), forms within forms to `MAX_FORM_DEPTH` and never one inside itself, each
//!   font it may select with its program and the codes of its CMap ranges, and colour spaces
//!   and patterns as often as named; a page within `MAX_PAGE_WORK`, all of them within
//!   `MAX_WORK`;
//! - nothing pdf-extract parses nests beyond `syntax::MAX_NESTING`, and no page is its own
//!   ancestor (pdf-extract looks up inherited entries by recursion).

use std::collections::{HashMap, HashSet};

use pdf_extract::{Dictionary, Document, Object, ObjectId};

use super::{
    filters::{self, Decoded, Filters},
    limits::{
        MAX_EXPANDED_BYTES, MAX_FORM_DEPTH, MAX_PAGE_CONTENT, MAX_PAGE_WORK, MAX_PAGES,
        MAX_STREAM_BYTES, MAX_WORK,
    },
    syntax::{self, MAX_NESTING},
};
use crate::StatementError;

/// What one use of a content stream costs besides its bytes (pdf-extract's state, a font
/// table), so many tiny uses are counted too.
const USE: u64 = 1024;

/// What a CMap code costs pdf-extract (an entry in each of two hash maps, with its string).
const CMAP_CODE: u64 = 128;

/// The most objects a font's or colour space's cost is counted over.
const MAX_REACHED: usize = 10_000;

/// Expands the document's streams and bounds the work of its pages; `Ok` means pdf-extract
/// may read it.
pub(super) fn prepare(doc: &mut Document) -> Result<(), StatementError> {
    expand_streams(doc)?;
    let pages = doc.get_pages();
    if pages.len() > MAX_PAGES {
        return Err(StatementError::TooManyPages { pages: pages.len(), max: MAX_PAGES });
    }
    let mut work =
        Work { doc, forms: HashMap::new(), reached: HashMap::new(), drawing: Vec::new() };
    let mut total = 0u64;
    for &page in pages.values() {
        no_page_is_its_own_ancestor(doc, page)?;
        let cost = work.page(page)?;
        if cost > MAX_PAGE_WORK {
            return Err(StatementError::PdfTooComplex);
        }
        total += cost;
        if total > MAX_WORK {
            return Err(StatementError::PdfTooComplex);
        }
    }
    Ok(())
}

/// Expands every stream once, in place, within the bounds, and empties those text never
/// needs.
fn expand_streams(doc: &mut Document) -> Result<(), StatementError> {
    let unneeded = unneeded_streams(doc);
    let mut expanded = 0usize;
    for (id, object) in doc.objects.iter_mut() {
        let Object::Stream(stream) = object else { continue };
        let is_image = stream.dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Image");
        let is_metadata =
            stream.dict.get(b"Type").and_then(Object::as_name).ok() == Some(b"Metadata");
        if is_image || is_metadata || unneeded.contains(id) {
            stream.set_plain_content(Vec::new());
            continue;
        }
        let Some(filters) = filters_of(&stream.dict) else { continue };
        let bytes = match filters::decode(&stream.content, &filters, MAX_STREAM_BYTES) {
            Ok(Decoded::Bytes(bytes)) => bytes,
            // lopdf would fail to decode it and use its bytes as they are: so, once and for
            // all, does everyone after this.
            Ok(Decoded::AsIs) => std::mem::take(&mut stream.content),
            Err(filters::TooLarge) => {
                return Err(StatementError::PdfTooLarge { max: MAX_STREAM_BYTES });
            }
        };
        expanded += bytes.len();
        if expanded > MAX_EXPANDED_BYTES {
            return Err(StatementError::PdfTooLarge { max: MAX_EXPANDED_BYTES });
        }
        stream.set_plain_content(bytes);
    }
    Ok(())
}

/// Streams only kept, never read, by pdf-extract: ICC colour profiles (`[/ICCBased ref]`) and
/// TrueType programs (`/FontFile2`).
fn unneeded_streams(doc: &Document) -> HashSet<ObjectId> {
    let mut found = HashSet::new();
    let mut pending: Vec<&Object> = doc.objects.values().collect();
    while let Some(object) = pending.pop() {
        match object {
            Object::Array(items) => {
                if let [Object::Name(name), Object::Reference(id), ..] = items.as_slice()
                    && name == b"ICCBased"
                {
                    found.insert(*id);
                }
                pending.extend(items);
            }
            Object::Dictionary(dict) => {
                if let Ok(Object::Reference(id)) = dict.get(b"FontFile2") {
                    found.insert(*id);
                }
                pending.extend(dict.iter().map(|(_, v)| v));
            }
            Object::Stream(stream) => pending.extend(stream.dict.iter().map(|(_, v)| v)),
            _ => {}
        }
    }
    found
}

/// The filters a stream's dictionary names, as lopdf reads them; `None` when it names none it
/// can read, and pdf-extract then uses the bytes as they are.
fn filters_of(dict: &Dictionary) -> Option<Filters> {
    let names: Vec<Vec<u8>> = match dict.get(b"Filter").ok()? {
        Object::Name(name) => vec![name.clone()],
        Object::Array(items) => {
            items.iter().map(|i| i.as_name().ok().map(<[u8]>::to_vec)).collect::<Option<_>>()?
        }
        _ => return None,
    };
    let params = dict.get(b"DecodeParms").and_then(Object::as_dict).ok();
    let number = |key: &[u8]| params.and_then(|p| p.get(key).and_then(Object::as_i64).ok());
    Some(Filters::new(names, params.map(|_| &number as filters::Parameter<'_>)))
}

/// pdf-extract looks up a page's inherited resources and media box through `/Parent` by
/// recursion, which a page among its own ancestors would never end.
fn no_page_is_its_own_ancestor(doc: &Document, page: ObjectId) -> Result<(), StatementError> {
    let mut seen = HashSet::from([page]);
    let mut current = page;
    while let Ok(parent) =
        doc.get_dictionary(current).and_then(|d| d.get(b"Parent")).and_then(Object::as_reference)
    {
        if !seen.insert(parent) || seen.len() > 256 {
            return Err(StatementError::PdfUnreadable);
        }
        current = parent;
    }
    Ok(())
}

/// The work of pages, counted as pdf-extract will do it, with what is worked out once kept.
struct Work<'a> {
    doc: &'a Document,
    /// A form's cost, and how many forms deep it draws, by its id and the resources it draws
    /// with.
    forms: HashMap<(ObjectId, usize), (u64, usize)>,
    /// What reading everything an entry reaches costs, by the entry's address.
    reached: HashMap<usize, u64>,
    /// The forms being drawn, outermost first.
    drawing: Vec<ObjectId>,
}

impl<'a> Work<'a> {
    fn page(&mut self, page: ObjectId) -> Result<u64, StatementError> {
        let doc = self.doc;
        let Ok(dict) = doc.get_dictionary(page) else { return Ok(USE) };
        let streams: Vec<&[u8]> = doc
            .get_page_contents(page)
            .into_iter()
            .filter_map(|id| doc.get_object(id).and_then(Object::as_stream).ok())
            .map(|stream| stream.content.as_slice())
            .collect();
        let length: usize = streams.iter().map(|s| s.len()).sum();
        if length > MAX_PAGE_CONTENT {
            return Err(StatementError::PdfTooComplex);
        }
        let content = streams.concat();
        let resources = inherited_dictionary(doc, dict, b"Resources");
        Ok(self.content(&content, resources, 0)?.0)
    }

    /// One parse of a content stream with its resources, and everything it draws: its cost,
    /// and how many forms deep it draws.
    fn content(
        &mut self,
        content: &[u8],
        resources: Option<&'a Dictionary>,
        depth: usize,
    ) -> Result<(u64, usize), StatementError> {
        let scan = syntax::scan_text(content);
        if scan.depth > MAX_NESTING {
            return Err(StatementError::PdfUnreadable);
        }
        let mut work = content.len() as u64 + USE;
        let mut height = 0;
        let Some(resources) = resources else { return Ok((work, height)) };
        let doc = self.doc;
        let categories: Vec<(&[u8], &'a Dictionary)> = resources
            .iter()
            .filter_map(|(category, entries)| {
                Some((category.as_slice(), deref(doc, entries).as_dict().ok()?))
            })
            .collect();
        // The names the content holds, looked up in each kind of resource: at most what the
        // content can use, however many resources there are.
        for (name, &uses) in &scan.names {
            for &(category, entries) in &categories {
                let Ok(entry) = entries.get(name) else { continue };
                let uses = uses as u64;
                let cost = match category {
                    // A font is made once a parse, when first selected.
                    b"Font" => self.reached(deref(doc, entry))?,
                    b"XObject" => {
                        let (cost, deep) = self.xobject(entry, resources, depth)?;
                        height = height.max(deep);
                        uses.saturating_mul(cost)
                    }
                    _ => uses.saturating_mul(self.reached(deref(doc, entry))?),
                };
                work = work.saturating_add(cost);
                if work > MAX_PAGE_WORK {
                    return Err(StatementError::PdfTooComplex);
                }
            }
        }
        Ok((work, height))
    }

    /// One drawing of an XObject: a form's content with its own resources (else the caller's),
    /// an image's (emptied) nothing; and how many forms deep it draws.
    fn xobject(
        &mut self,
        entry: &'a Object,
        resources: &'a Dictionary,
        depth: usize,
    ) -> Result<(u64, usize), StatementError> {
        let doc = self.doc;
        let Object::Reference(id) = entry else { return Ok((USE, 0)) };
        let Ok(stream) = doc.get_object(*id).and_then(Object::as_stream) else {
            return Ok((USE, 0));
        };
        let own = stream.dict.get(b"Resources").ok().map(|r| deref(doc, r));
        let resources = own.and_then(|r| r.as_dict().ok()).unwrap_or(resources);
        let key = (*id, resources as *const Dictionary as usize);
        let drawn = match self.forms.get(&key) {
            Some(&drawn) => drawn,
            None => {
                if self.drawing.contains(id) {
                    // A form that draws itself: pdf-extract would recurse until the stack
                    // overflows.
                    return Err(StatementError::PdfUnreadable);
                }
                if stream.content.len() > MAX_PAGE_CONTENT {
                    return Err(StatementError::PdfTooComplex);
                }
                self.drawing.push(*id);
                let drawn = self.content(&stream.content, Some(resources), depth + 1);
                self.drawing.pop();
                let (cost, height) = drawn?;
                self.forms.insert(key, (cost, height + 1));
                (cost, height + 1)
            }
        };
        if depth + drawn.1 > MAX_FORM_DEPTH {
            // Forms nested without end: pdf-extract recurses once a form.
            return Err(StatementError::PdfUnreadable);
        }
        Ok(drawn)
    }

    /// What reading everything an entry reaches costs (making a font, a colour space, a
    /// pattern): the bytes of each stream (pdf-extract copies a stream each time it uses it)
    /// and the codes of CMap ranges. What pdf-extract parses as text (a CMap; a Type 1
    /// program's clear text, `/Length1` bytes) must not nest too deeply; the rest is binary and
    /// only counted.
    fn reached(&mut self, entry: &'a Object) -> Result<u64, StatementError> {
        let key = entry as *const Object as usize;
        if let Some(&cost) = self.reached.get(&key) {
            return Ok(cost);
        }
        let doc = self.doc;
        let mut cost = 0u64;
        let mut seen: HashSet<ObjectId> = HashSet::new();
        // Each object with the key it was reached through.
        let mut pending: Vec<(&Object, &[u8])> = vec![(entry, b"")];
        let mut visited = 0usize;
        while let Some((object, key)) = pending.pop() {
            visited += 1;
            if visited > MAX_REACHED {
                return Err(StatementError::PdfTooComplex);
            }
            match object {
                Object::Reference(id) => {
                    if seen.insert(*id)
                        && let Ok(target) = doc.get_object(*id)
                    {
                        pending.push((target, key));
                    }
                }
                Object::Array(items) => pending.extend(items.iter().map(|item| (item, key))),
                Object::Dictionary(dict) => {
                    pending.extend(dict.iter().map(|(k, v)| (v, k.as_slice())));
                }
                Object::Stream(stream) => {
                    let text: &[u8] = match key {
                        b"ToUnicode" | b"Encoding" => &stream.content,
                        b"FontFile" => {
                            let clear = stream.dict.get(b"Length1").and_then(Object::as_i64);
                            let clear = clear.map_or(stream.content.len(), |n| n.max(0) as usize);
                            &stream.content[..clear.min(stream.content.len())]
                        }
                        _ => &[],
                    };
                    let scan = syntax::scan_text(text);
                    if scan.depth > MAX_NESTING {
                        return Err(StatementError::PdfUnreadable);
                    }
                    cost = cost
                        .saturating_add(stream.content.len() as u64 + USE)
                        .saturating_add(scan.range_codes.saturating_mul(CMAP_CODE));
                    pending.extend(stream.dict.iter().map(|(k, v)| (v, k.as_slice())));
                }
                _ => {}
            }
            if cost > MAX_PAGE_WORK {
                return Err(StatementError::PdfTooComplex);
            }
        }
        self.reached.insert(key, cost);
        Ok(cost)
    }
}

/// A dictionary of a page or of the pages above it, as pdf-extract looks one up: the first
/// value under `key` that is a dictionary (one that is not, it passes over).
fn inherited_dictionary<'a>(
    doc: &'a Document,
    dict: &'a Dictionary,
    key: &[u8],
) -> Option<&'a Dictionary> {
    let mut current = dict;
    for _ in 0..256 {
        if let Some(found) = current.get(key).ok().and_then(|v| deref(doc, v).as_dict().ok()) {
            return Some(found);
        }
        current = current
            .get(b"Parent")
            .and_then(Object::as_reference)
            .and_then(|id| doc.get_dictionary(id))
            .ok()?;
    }
    None
}

fn deref<'a>(doc: &'a Document, object: &'a Object) -> &'a Object {
    match object {
        Object::Reference(id) => doc.get_object(*id).unwrap_or(object),
        _ => object,
    }
}
