//! What an uploaded file really is, from its first bytes (decisions §4): the declared type is never
//! trusted for screenshots and audio.

use crate::ingest::BlobKind;

/// How many leading bytes the sniffers need (image headers can sit behind EXIF data).
pub const SNIFF_BYTES: usize = 256 * 1024;

/// The stored type of an upload of `kind`, or `None` when its bytes are not an accepted type.
/// `declared` is the client's Content-Type: it only adds `;codecs=` to a matching audio type, and
/// names file attachments (any type is accepted there).
pub fn detect(kind: BlobKind, head: &[u8], declared: Option<&str>) -> Option<String> {
    match kind {
        BlobKind::Screenshot => image_type(head).map(String::from),
        BlobKind::Audio => {
            let base = audio_type(head)?;
            let declared = declared.unwrap_or_default().trim();
            let same_base = declared.split(';').next().is_some_and(|d| d.trim().eq_ignore_ascii_case(base));
            match declared.split_once(';') {
                Some((_, params)) if same_base && is_safe_params(params) => {
                    Some(format!("{base};{}", params.trim().to_ascii_lowercase()))
                }
                _ => Some(base.to_string()),
            }
        }
        BlobKind::File => Some(file_type(declared)),
    }
}

fn image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn audio_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        Some("audio/webm")
    } else if head.starts_with(b"OggS") {
        Some("audio/ogg")
    } else if head.len() >= 8 && &head[4..8] == b"ftyp" {
        Some("audio/mp4")
    } else {
        None
    }
}

fn is_safe_params(params: &str) -> bool {
    params.len() <= 100 && params.bytes().all(|b| b.is_ascii_alphanumeric() || b" =.,-_\"".contains(&b))
}

/// A file's type as declared, when it is a plain `type/subtype`; else `application/octet-stream`.
fn file_type(declared: Option<&str>) -> String {
    let base = declared.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let valid = base.len() <= 100
        && base.split_once('/').is_some_and(|(t, s)| {
            let token =
                |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
            token(t) && token(s)
        });
    if valid { base } else { "application/octet-stream".into() }
}

/// Width and height from an image header.
pub fn image_dimensions(head: &[u8]) -> Option<(i64, i64)> {
    imagesize::blob_size(head).ok().map(|size| (size.width as i64, size.height as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_1X1: &[u8] = &[
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
        0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x06, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn screenshots_are_typed_by_their_bytes() {
        assert_eq!(detect(BlobKind::Screenshot, PNG_1X1, Some("image/jpeg")).as_deref(), Some("image/png"));
        assert_eq!(image_dimensions(PNG_1X1), Some((3, 2)));
        assert_eq!(detect(BlobKind::Screenshot, b"<html><script>", Some("image/png")), None);
        assert_eq!(detect(BlobKind::Screenshot, b"<svg xmlns=", Some("image/svg+xml")), None);
        assert_eq!(detect(BlobKind::Screenshot, b"RIFF\0\0\0\0WEBPVP8 ", None).as_deref(), Some("image/webp"));
    }

    #[test]
    fn audio_keeps_codecs_of_a_matching_declared_type() {
        let webm = [0x1A, 0x45, 0xDF, 0xA3, 0, 0, 0, 0];
        assert_eq!(
            detect(BlobKind::Audio, &webm, Some("audio/webm;codecs=opus")).as_deref(),
            Some("audio/webm;codecs=opus")
        );
        assert_eq!(detect(BlobKind::Audio, &webm, Some("audio/ogg;codecs=opus")).as_deref(), Some("audio/webm"));
        assert_eq!(detect(BlobKind::Audio, b"OggS\0", None).as_deref(), Some("audio/ogg"));
        assert_eq!(detect(BlobKind::Audio, b"\0\0\0\x20ftypM4A ", None).as_deref(), Some("audio/mp4"));
        assert_eq!(detect(BlobKind::Audio, b"ID3\x03", Some("audio/mpeg")), None);
    }

    #[test]
    fn files_take_any_type() {
        assert_eq!(detect(BlobKind::File, b"hello", Some("text/plain; charset=utf-8")).as_deref(), Some("text/plain"));
        assert_eq!(detect(BlobKind::File, b"x", Some("nonsense")).as_deref(), Some("application/octet-stream"));
        assert_eq!(detect(BlobKind::File, b"x", None).as_deref(), Some("application/octet-stream"));
    }
}
