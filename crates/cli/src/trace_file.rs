//! A trace file's contents, whatever it is: kineto's JSON or a Perfetto
//! protobuf trace, either of them gzip-compressed (PyTorch writes
//! `.json.gz` when asked; our pftrace is gzip by default). The format is
//! told from the bytes, not the name.
use std::io::Read;
use std::path::Path;

pub enum Contents {
    Json(String),
    Pftrace(Vec<u8>),
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

pub fn load(path: &Path) -> Result<Contents, String> {
    let raw = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let bytes = if raw.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::with_capacity(raw.len() * 8);
        flate2::read::MultiGzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: not a valid gzip file: {e}", path.display()))?;
        out
    } else {
        raw
    };
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') | Some(b'[') => String::from_utf8(bytes)
            .map(Contents::Json)
            .map_err(|e| format!("{}: JSON that is not UTF-8: {e}", path.display())),
        Some(_) => Ok(Contents::Pftrace(bytes)),
        None => Err(format!("{}: empty file", path.display())),
    }
}
