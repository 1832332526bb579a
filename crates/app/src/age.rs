//! A backup sealed with a passphrase, in the age format (age-encryption.org/v1 with its
//! scrypt recipient), so that a person opens it with any age tool (`age -d`, `rage -d`)
//! without Exhale: the file key wrapped under the passphrase, the header authenticated, the
//! content in 64 KiB chunks of ChaCha20-Poly1305, each bound to its place and to whether it
//! is the last, so a file cut short or changed anywhere is refused rather than half opened.
//!
//! ring has the cipher, HKDF and HMAC; the `scrypt` crate derives the passphrase's key.

use std::io::{BufRead, Read, Write};

use base64::{Engine as _, engine::general_purpose::STANDARD_NO_PAD};
use ring::{aead, hkdf, hmac};

/// The first line of every age file.
const VERSION_LINE: &str = "age-encryption.org/v1";
/// The payload is sealed in chunks of this much plain text.
const CHUNK: usize = 64 * 1024;
const TAG: usize = 16;
/// log2 of scrypt's cost when sealing: what age itself chooses on a current machine (256 MiB
/// and about a second, once per backup).
const WORK_FACTOR: u8 = 18;
/// The most a file may ask of scrypt when opened (1 GiB): beyond it, a file would be a way to
/// make Exhale spend its memory.
const MOST_WORK_FACTOR: u8 = 20;
/// What scrypt's salt starts with, before the file's own 16 random bytes.
const SCRYPT_LABEL: &[u8] = b"age-encryption.org/v1/scrypt";
/// A header line is never longer (a stanza's arguments or 64 characters of its body).
const MOST_LINE: usize = 256;
/// A header of more lines is not one Exhale (or age with a passphrase) wrote.
const MOST_LINES: usize = 16;

/// Why a sealed backup could not be sealed or opened.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("the passphrase does not open this backup")]
    WrongPassphrase,
    #[error("the backup is damaged or cut short ({0})")]
    Damaged(&'static str),
    #[error("the backup is sealed for age recipients (keys), not with a passphrase")]
    NotPassphrase,
    #[error("the backup asks for more work to open than Exhale allows (scrypt 2^{0})")]
    TooCostly(u8),
    #[error("the operating system gave no random bytes")]
    NoRandomness,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Whether a file starting with `head` is sealed in the age format.
pub(crate) fn is_sealed(head: &[u8]) -> bool {
    head.starts_with(VERSION_LINE.as_bytes())
}

/// The random key a sealed file's content is encrypted with. Kept by whoever sealed the file
/// only to read it back once ([`open_with_key`]) and check what was written.
pub(crate) struct FileKey([u8; 16]);

/// Seals all of `plain` into `sealed` under `passphrase`; returns the file's key.
pub(crate) fn seal(
    passphrase: &str,
    plain: &mut impl BufRead,
    sealed: &mut impl Write,
) -> Result<FileKey, SealError> {
    let mut file_key = [0u8; 16];
    let mut salt = [0u8; 16];
    let mut nonce = [0u8; 16];
    for bytes in [&mut file_key[..], &mut salt, &mut nonce] {
        getrandom::fill(bytes).map_err(|_| SealError::NoRandomness)?;
    }
    let wrapping = passphrase_key(passphrase, &salt, WORK_FACTOR)?;
    let mut wrapped = file_key.to_vec();
    wrapping
        .seal_in_place_append_tag(zero_nonce(), aead::Aad::empty(), &mut wrapped)
        .map_err(|_| SealError::Damaged("the file key could not be wrapped"))?;
    let mut header = format!(
        "{VERSION_LINE}\n-> scrypt {} {WORK_FACTOR}\n{}\n---",
        STANDARD_NO_PAD.encode(salt),
        STANDARD_NO_PAD.encode(&wrapped)
    );
    let mac = hmac::sign(&header_mac_key(&file_key), header.as_bytes());
    header.push(' ');
    header.push_str(&STANDARD_NO_PAD.encode(mac.as_ref()));
    header.push('\n');
    sealed.write_all(header.as_bytes())?;
    sealed.write_all(&nonce)?;
    let key = payload_key(&file_key, &nonce)?;
    let mut buffer = vec![0u8; CHUNK];
    let mut counter = 0u128;
    loop {
        let read = read_full(plain, &mut buffer)?;
        let last = read < CHUNK || plain.fill_buf()?.is_empty();
        let tag = key
            .seal_in_place_separate_tag(
                chunk_nonce(counter, last),
                aead::Aad::empty(),
                &mut buffer[..read],
            )
            .map_err(|_| SealError::Damaged("a chunk could not be sealed"))?;
        sealed.write_all(&buffer[..read])?;
        sealed.write_all(tag.as_ref())?;
        if last {
            return Ok(FileKey(file_key));
        }
        counter += 1;
    }
}

/// Opens what `sealed` holds with `passphrase`, writing the plain content to `plain`. On an
/// error, what was written so far must be thrown away.
pub(crate) fn open(
    passphrase: &str,
    sealed: &mut impl BufRead,
    plain: &mut impl Write,
) -> Result<(), SealError> {
    let header = read_header(sealed)?;
    let file_key = unwrap_with_passphrase(&header, passphrase)?;
    open_payload(&header, &file_key, sealed, plain)
}

/// Opens a file this process sealed, with the key [`seal`] returned: every chunk and the
/// header checked as [`open`] checks them, without deriving the passphrase's key again.
pub(crate) fn open_with_key(
    key: &FileKey,
    sealed: &mut impl BufRead,
    plain: &mut impl Write,
) -> Result<(), SealError> {
    let header = read_header(sealed)?;
    open_payload(&header, &key.0, sealed, plain)
}

/// A header as read: its stanzas (arguments and body) and its MAC, with the bytes the MAC
/// covers.
struct Header {
    stanzas: Vec<(Vec<String>, Vec<u8>)>,
    covered: Vec<u8>,
    mac: Vec<u8>,
}

fn read_header(sealed: &mut impl BufRead) -> Result<Header, SealError> {
    let not_age = SealError::Damaged("not an age file");
    let mut covered = Vec::new();
    let first = read_line(sealed)?.ok_or(SealError::Damaged("empty"))?;
    if first != VERSION_LINE {
        return Err(not_age);
    }
    covered.extend_from_slice(first.as_bytes());
    covered.push(b'\n');
    let mut stanzas = Vec::new();
    let mut line = read_line(sealed)?.ok_or(SealError::Damaged("the header ends early"))?;
    for _ in 0..MOST_LINES {
        if let Some(mac) = line.strip_prefix("--- ") {
            covered.extend_from_slice(b"---");
            let mac = STANDARD_NO_PAD
                .decode(mac)
                .map_err(|_| SealError::Damaged("the header's MAC is not base64"))?;
            return Ok(Header { stanzas, covered, mac });
        }
        let arguments = line
            .strip_prefix("-> ")
            .ok_or(SealError::Damaged("a header line is not a stanza"))?
            .split(' ')
            .map(str::to_owned)
            .collect::<Vec<_>>();
        covered.extend_from_slice(line.as_bytes());
        covered.push(b'\n');
        // A body is lines of 64 characters, ended by a shorter one (empty if need be).
        let mut body = String::new();
        loop {
            let part = read_line(sealed)?.ok_or(SealError::Damaged("the header ends early"))?;
            covered.extend_from_slice(part.as_bytes());
            covered.push(b'\n');
            let full = part.len() == 64;
            body.push_str(&part);
            if !full {
                break;
            }
        }
        let body = STANDARD_NO_PAD
            .decode(&body)
            .map_err(|_| SealError::Damaged("a stanza's body is not base64"))?;
        stanzas.push((arguments, body));
        line = read_line(sealed)?.ok_or(SealError::Damaged("the header ends early"))?;
    }
    Err(SealError::Damaged("the header is too long"))
}

/// The file key, unwrapped from the header's one scrypt stanza with `passphrase`.
fn unwrap_with_passphrase(header: &Header, passphrase: &str) -> Result<[u8; 16], SealError> {
    let Some((arguments, body)) = header.stanzas.iter().find(|(args, _)| args[0] == "scrypt")
    else {
        return Err(SealError::NotPassphrase);
    };
    // age allows a passphrase's stanza only alone: another would open the file without it.
    if header.stanzas.len() != 1 {
        return Err(SealError::Damaged("a passphrase's stanza is not alone"));
    }
    let [_, salt, work] = arguments.as_slice() else {
        return Err(SealError::Damaged("the scrypt stanza is malformed"));
    };
    let salt: [u8; 16] = STANDARD_NO_PAD
        .decode(salt)
        .ok()
        .and_then(|salt| salt.try_into().ok())
        .ok_or(SealError::Damaged("the scrypt salt is malformed"))?;
    let work: u8 = work
        .parse()
        .ok()
        .filter(|w: &u8| *w > 0 && !work.starts_with('0'))
        .ok_or(SealError::Damaged("the scrypt work factor is malformed"))?;
    if work > MOST_WORK_FACTOR {
        return Err(SealError::TooCostly(work));
    }
    if body.len() != 32 {
        return Err(SealError::Damaged("the wrapped file key is malformed"));
    }
    let key = passphrase_key(passphrase, &salt, work)?;
    let mut wrapped = body.clone();
    let file_key = key
        .open_in_place(zero_nonce(), aead::Aad::empty(), &mut wrapped)
        .map_err(|_| SealError::WrongPassphrase)?;
    file_key.try_into().map_err(|_| SealError::Damaged("the file key is malformed"))
}

fn open_payload(
    header: &Header,
    file_key: &[u8; 16],
    sealed: &mut impl BufRead,
    plain: &mut impl Write,
) -> Result<(), SealError> {
    hmac::verify(&header_mac_key(file_key), &header.covered, &header.mac)
        .map_err(|_| SealError::Damaged("the header was changed"))?;
    let mut nonce = [0u8; 16];
    if read_full(sealed, &mut nonce)? < nonce.len() {
        return Err(SealError::Damaged("it ends before its content"));
    }
    let key = payload_key(file_key, &nonce)?;
    let mut buffer = vec![0u8; CHUNK + TAG];
    let mut counter = 0u128;
    loop {
        let read = read_full(sealed, &mut buffer)?;
        if read < TAG {
            return Err(SealError::Damaged("it is cut short"));
        }
        let last = read < buffer.len() || sealed.fill_buf()?.is_empty();
        let chunk = key
            .open_in_place(chunk_nonce(counter, last), aead::Aad::empty(), &mut buffer[..read])
            .map_err(|_| SealError::Damaged("its content was changed or cut short"))?;
        if last && chunk.is_empty() && counter > 0 {
            return Err(SealError::Damaged("its last chunk is empty"));
        }
        plain.write_all(chunk)?;
        if last {
            return Ok(());
        }
        counter += 1;
    }
}

fn passphrase_key(
    passphrase: &str,
    salt: &[u8; 16],
    work: u8,
) -> Result<aead::LessSafeKey, SealError> {
    let mut scrypt_salt = SCRYPT_LABEL.to_vec();
    scrypt_salt.extend_from_slice(salt);
    let params = scrypt::Params::new(work, 8, 1).map_err(|_| SealError::TooCostly(work))?;
    let mut key = [0u8; 32];
    scrypt::scrypt(passphrase.as_bytes(), &scrypt_salt, &params, &mut key)
        .map_err(|_| SealError::TooCostly(work))?;
    chacha_key(&key)
}

fn header_mac_key(file_key: &[u8; 16]) -> hmac::Key {
    hmac::Key::new(hmac::HMAC_SHA256, &expand(file_key, &[], b"header"))
}

fn payload_key(file_key: &[u8; 16], nonce: &[u8; 16]) -> Result<aead::LessSafeKey, SealError> {
    chacha_key(&expand(file_key, nonce, b"payload"))
}

/// HKDF-SHA-256 of `secret` with `salt` and `info`, 32 bytes.
fn expand(secret: &[u8], salt: &[u8], info: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    let info = [info];
    let filled = hkdf::Salt::new(hkdf::HKDF_SHA256, salt)
        .extract(secret)
        .expand(&info, hkdf::HKDF_SHA256)
        .and_then(|okm| okm.fill(&mut out));
    // 32 bytes is SHA-256's own length, which HKDF always gives.
    debug_assert!(filled.is_ok());
    out
}

fn chacha_key(key: &[u8; 32]) -> Result<aead::LessSafeKey, SealError> {
    aead::UnboundKey::new(&aead::CHACHA20_POLY1305, key)
        .map(aead::LessSafeKey::new)
        .map_err(|_| SealError::Damaged("a key could not be made"))
}

fn zero_nonce() -> aead::Nonce {
    aead::Nonce::assume_unique_for_key([0u8; 12])
}

/// A chunk's nonce: its number in 11 bytes, big-endian, then 1 for the last chunk.
fn chunk_nonce(counter: u128, last: bool) -> aead::Nonce {
    let mut nonce = [0u8; 12];
    nonce[..11].copy_from_slice(&counter.to_be_bytes()[5..]);
    nonce[11] = u8::from(last);
    aead::Nonce::assume_unique_for_key(nonce)
}

/// Reads until `buffer` is full or the input ends; how much was read.
fn read_full(input: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match input.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// One header line without its newline; `None` at the end of the input. A line longer than
/// any age header's, or one that is not text, is damage.
fn read_line(input: &mut impl BufRead) -> Result<Option<String>, SealError> {
    let mut line = Vec::new();
    input.take(MOST_LINE as u64 + 1).read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Ok(None);
    }
    if line.pop() != Some(b'\n') {
        return Err(SealError::Damaged("a header line is too long or unended"));
    }
    String::from_utf8(line).map(Some).map_err(|_| SealError::Damaged("the header is not text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(passphrase: &str, plain: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        seal(passphrase, &mut &plain[..], &mut out).unwrap();
        out
    }

    fn opened(passphrase: &str, sealed: &[u8]) -> Result<Vec<u8>, SealError> {
        let mut out = Vec::new();
        open(passphrase, &mut &sealed[..], &mut out).map(|()| out)
    }

    #[test]
    fn what_is_sealed_opens_with_its_passphrase_at_every_chunk_boundary() {
        for size in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK] {
            let plain: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let file = sealed("correct horse", &plain);
            assert!(is_sealed(&file));
            let chunks = size.div_ceil(CHUNK).max(1);
            let header_end = file.windows(4).position(|w| w == b"--- ").unwrap();
            let header_len =
                header_end + file[header_end..].iter().position(|b| *b == b'\n').unwrap() + 1;
            assert_eq!(file.len(), header_len + 16 + size + chunks * TAG, "size {size}");
            assert_eq!(opened("correct horse", &file).unwrap(), plain, "size {size}");
        }
    }

    #[test]
    fn a_wrong_passphrase_a_change_or_a_cut_is_refused() {
        let plain = vec![42u8; CHUNK + 10];
        let file = sealed("right", &plain);
        assert!(matches!(opened("wrong", &file), Err(SealError::WrongPassphrase)));
        let mut changed = file.clone();
        let at = changed.len() - 20;
        changed[at] ^= 1;
        assert!(matches!(opened("right", &changed), Err(SealError::Damaged(_))));
        // Cut at a chunk's end: the first chunk is not marked last, so it does not open.
        let cut = &file[..file.len() - (10 + TAG)];
        assert!(matches!(opened("right", cut), Err(SealError::Damaged(_))));
        let mut header_changed = file.clone();
        let work = header_changed.windows(3).position(|w| w == b" 18").unwrap();
        header_changed[work + 2] = b'7';
        assert!(opened("right", &header_changed).is_err());
        assert!(matches!(opened("right", b"SQLite format 3\0"), Err(SealError::Damaged(_))));
    }

    #[test]
    fn a_file_for_keys_or_asking_too_much_work_is_refused_before_any_work() {
        let mut file = sealed("right", b"data");
        let text = String::from_utf8_lossy(&file).into_owned();
        let costly = text.replacen(" 18\n", " 30\n", 1);
        file = costly.into_bytes();
        assert!(matches!(opened("right", &file), Err(SealError::TooCostly(30))));
        let for_keys = b"age-encryption.org/v1\n-> X25519 abc\nAAAA\n--- AAAA\n";
        assert!(matches!(opened("right", for_keys), Err(SealError::NotPassphrase)));
    }

    #[test]
    fn the_sealer_reads_its_own_file_back_with_the_file_key() {
        let plain = vec![7u8; 1000];
        let mut file = Vec::new();
        let key = seal("p", &mut &plain[..], &mut file).unwrap();
        let mut back = Vec::new();
        open_with_key(&key, &mut &file[..], &mut back).unwrap();
        assert_eq!(back, plain);
    }
}
