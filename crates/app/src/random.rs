//! Random bytes as hex: secrets, batch ids, confirmation ids and a bank consent's state.

use ops::OpError;

/// `bytes` random bytes as hex.
pub(crate) fn random_hex(bytes: usize) -> Result<String, OpError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|_| OpError::Internal)?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}
