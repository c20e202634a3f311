//! SHA-256 digests as lower-case hex: of bytes, of a file, and of a
//! stream of parts. The weights' identity, the manifest's checksum, the
//! feed cache's keys and the legacy format's check all use these.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Lower-case hex of some bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The hex SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The hex SHA-256 of a file's contents, read a mebibyte at a time.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// A SHA-256 fed part by part ([`Hasher::part`] ends each with a zero
/// byte, so `["ab", "c"]` and `["a", "bc"]` differ).
#[derive(Default)]
pub struct Hasher(Sha256);

impl Hasher {
    /// Adds `bytes` as they are.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Adds `part` and a zero byte after it.
    pub fn part(&mut self, part: &[u8]) {
        self.0.update(part);
        self.0.update([0]);
    }

    /// The digest in hex.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_the_published_test_vector_and_parts_are_delimited() {
        assert_eq!(
            sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let (mut a, mut b) = (Hasher::default(), Hasher::default());
        a.part(b"ab");
        a.part(b"c");
        b.part(b"a");
        b.part(b"bc");
        assert_ne!(a.finish(), b.finish());
    }
}
