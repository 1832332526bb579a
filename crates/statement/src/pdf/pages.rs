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
    MAX_EXPANDED_BYTES, MAX_FORM_DEPTH, MAX_PAGE_CONTENT, MAX_PAGE_WORK, MAX_PAGES,
    MAX_STREAM_BYTES, MAX_WORK,
    filters::{self, Decoded, Filters},
    syntax::{self, MAX_NESTING},
};
use crate::StatementError;

/// What one use of a content stream costs besides its bytes (pdf-extract's state, a font
/// table), so many tiny uses are counted too.
const USE: u64 = 1024;

/// What a CMap code costs pdf-extract (an entry of a hash map with its string).
const CMAP_CODE: u64 = 32;

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
    let mut work = Work { doc, forms: HashMap::new(), fonts: HashMap::new(), drawing: Vec::new() };
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
    /// A form's cost by its id and the resources it draws with.
    forms: HashMap<(ObjectId, usize), u64>,
    /// A font's cost by the address of its dictionary.
    fonts: HashMap<usize, u64>,
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
        let resources = inherited(doc, dict, b"Resources").and_then(|r| r.as_dict().ok());
        self.content(&content, resources, 0)
    }

    /// One parse of a content stream with its resources, and everything it draws.
    fn content(
        &mut self,
        content: &[u8],
        resources: Option<&'a Dictionary>,
        depth: usize,
    ) -> Result<u64, StatementError> {
        let scan = syntax::scan_text(content);
        if scan.depth > MAX_NESTING {
            return Err(StatementError::PdfUnreadable);
        }
        let mut work = content.len() as u64 + USE;
        let Some(resources) = resources else { return Ok(work) };
        let doc = self.doc;
        for (category, entries) in resources.iter() {
            let Ok(entries) = deref(doc, entries).as_dict() else { continue };
            for (name, entry) in entries.iter() {
                let uses = scan.names.get(name.as_slice()).copied().unwrap_or(0) as u64;
                if uses == 0 {
                    continue;
                }
                let entry = deref(doc, entry);
                let cost = match category.as_slice() {
                    // A font is made once a parse, when first selected.
                    b"Font" => self.font(entry)?,
                    b"XObject" => uses.saturating_mul(self.xobject(
                        entries.get(name).ok(),
                        resources,
                        depth,
                    )?),
                    _ => uses.saturating_mul(self.reached(entry)?),
                };
                work = work.saturating_add(cost);
                if work > MAX_PAGE_WORK {
                    return Err(StatementError::PdfTooComplex);
                }
            }
        }
        Ok(work)
    }

    /// One drawing of an XObject: a form's content with its own resources (else the caller's),
    /// an image's (emptied) nothing.
    fn xobject(
        &mut self,
        entry: Option<&'a Object>,
        resources: &'a Dictionary,
        depth: usize,
    ) -> Result<u64, StatementError> {
        let doc = self.doc;
        let Some(Object::Reference(id)) = entry else {
            // A form written in place has no id to recognise it by: drawn only once, counted so.
            return match entry.map(|e| deref(doc, e)) {
                Some(Object::Stream(stream)) => {
                    let own = stream.dict.get(b"Resources").ok().map(|r| deref(doc, r));
                    let resources = own.and_then(|r| r.as_dict().ok()).unwrap_or(resources);
                    self.form_content(&stream.content, resources, depth)
                }
                _ => Ok(USE),
            };
        };
        let Ok(stream) = doc.get_object(*id).and_then(Object::as_stream) else { return Ok(USE) };
        if self.drawing.contains(id) || depth >= MAX_FORM_DEPTH {
            // A form that draws itself, or forms nested without end: pdf-extract would recurse
            // until the stack overflows.
            return Err(StatementError::PdfUnreadable);
        }
        let own = stream.dict.get(b"Resources").ok().map(|r| deref(doc, r));
        let resources = own.and_then(|r| r.as_dict().ok()).unwrap_or(resources);
        let key = (*id, resources as *const Dictionary as usize);
        if let Some(&cost) = self.forms.get(&key) {
            return Ok(cost);
        }
        self.drawing.push(*id);
        let cost = self.form_content(&stream.content, resources, depth);
        self.drawing.pop();
        let cost = cost?;
        self.forms.insert(key, cost);
        Ok(cost)
    }

    fn form_content(
        &mut self,
        content: &'a [u8],
        resources: &'a Dictionary,
        depth: usize,
    ) -> Result<u64, StatementError> {
        if content.len() > MAX_PAGE_CONTENT {
            return Err(StatementError::PdfTooComplex);
        }
        self.content(content, Some(resources), depth + 1)
    }

    /// Making a font: its program and code maps read, each CMap's ranges expanded.
    fn font(&mut self, font: &'a Object) -> Result<u64, StatementError> {
        let key = font as *const Object as usize;
        if let Some(&cost) = self.fonts.get(&key) {
            return Ok(cost);
        }
        let cost = self.reached(font)?;
        self.fonts.insert(key, cost);
        Ok(cost)
    }

    /// What reading everything an entry reaches costs: the bytes of each stream (pdf-extract
    /// copies a stream each time it uses it) and the codes of CMap ranges; each text it parses
    /// (a CMap, a Type 1 program's clear text) must not nest too deeply.
    fn reached(&mut self, entry: &'a Object) -> Result<u64, StatementError> {
        let doc = self.doc;
        let mut cost = 0u64;
        let mut seen: HashSet<ObjectId> = HashSet::new();
        let mut pending: Vec<&Object> = vec![entry];
        let mut visited = 0usize;
        while let Some(object) = pending.pop() {
            visited += 1;
            if visited > MAX_REACHED {
                return Err(StatementError::PdfTooComplex);
            }
            match object {
                Object::Reference(id) => {
                    if seen.insert(*id)
                        && let Ok(target) = doc.get_object(*id)
                    {
                        pending.push(target);
                    }
                }
                Object::Array(items) => pending.extend(items),
                Object::Dictionary(dict) => pending.extend(dict.iter().map(|(_, v)| v)),
                Object::Stream(stream) => {
                    // A Type 1 program is clear text for `/Length1` bytes, then encrypted.
                    let text = match stream.dict.get(b"Length1").and_then(Object::as_i64) {
                        Ok(clear) => {
                            &stream.content[..(clear.max(0) as usize).min(stream.content.len())]
                        }
                        Err(_) => stream.content.as_slice(),
                    };
                    let scan = syntax::scan_text(text);
                    if scan.depth > MAX_NESTING {
                        return Err(StatementError::PdfUnreadable);
                    }
                    cost = cost
                        .saturating_add(stream.content.len() as u64 + USE)
                        .saturating_add(scan.range_codes.saturating_mul(CMAP_CODE));
                    pending.extend(stream.dict.iter().map(|(_, v)| v));
                }
                _ => {}
            }
            if cost > MAX_PAGE_WORK {
                return Err(StatementError::PdfTooComplex);
            }
        }
        Ok(cost)
    }
}

/// An entry of a dictionary or of the pages above it, as pdf-extract looks it up.
fn inherited<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    let mut current = dict;
    for _ in 0..256 {
        if let Ok(value) = current.get(key) {
            return Some(deref(doc, value));
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
