//! What reading one PDF may cost: pages, bytes unpacked, tokens, content, forms within
//! forms, work and characters. The lowest layer of the PDF reader: `file.rs` and `pages.rs`
//! check against these before lopdf and pdf-extract see a file.

/// The most pages read: a year of a busy account is a few dozen.
pub(crate) const MAX_PAGES: usize = 500;

/// The most one stream may unpack to (a page's content, a font, an object stream): a page of
/// small print is tens of kilobytes, an embedded font hundreds.
pub const MAX_STREAM_BYTES: usize = 4 << 20;

/// The most a document's streams may unpack to together (images are never unpacked).
pub const MAX_EXPANDED_BYTES: usize = 16 << 20;

/// The most tokens of objects lopdf may parse: each costs tens of bytes of memory, and a
/// statement has tens of thousands.
pub(super) const MAX_OBJECT_TOKENS: usize = 1_000_000;

/// The most content parsed at once (a page's content streams together, a form's): parsed, an
/// operator costs up to 120 bytes of memory a byte of content, and pdf-extract reads about a
/// mebibyte a second; a statement's page is tens of kilobytes.
pub(crate) const MAX_PAGE_CONTENT: usize = 512 << 10;

/// The most forms drawn within each other.
pub(super) const MAX_FORM_DEPTH: usize = 12;

/// The most work one page may cost, and all of them together: bytes parsed or copied, counted
/// as `pages.rs` says (about a mebibyte a second).
pub(super) const MAX_PAGE_WORK: u64 = 4 << 20;
pub(super) const MAX_WORK: u64 = 16 << 20;

/// The most characters read: 250 full pages of small print (each kept costs about 70 bytes).
pub(crate) const MAX_CHARACTERS: usize = 1_000_000;
