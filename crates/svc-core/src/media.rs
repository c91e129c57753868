//! What an uploaded file really is, from its first bytes (decisions §4): the declared type is never
//! trusted for screenshots and audio.

use crate::ingest::BlobKind;

/// How many leading bytes of an upload are kept for the sniffers and the image header. Every
/// type is told by its first few bytes, and a PNG's or WebP's size by its first 30; a JPEG's frame
/// header can sit behind metadata segments (EXIF, ICC), one of which holds up to 64 KiB. A header
/// further in is read from the stored file instead. Each upload in flight holds this much, so
/// it is not more: at 256 KiB a 200 KB screenshot was copied whole, 64 uploads at once held
/// 13 MB of copies (bench/README.md, "The screenshot peak").
pub const SNIFF_BYTES: usize = 64 * 1024;

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

/// The largest width or height a screenshot may declare (JPEG's own limit is 65,535).
pub const IMAGE_SIDE_MAX: u32 = 32_768;
/// The most pixels a screenshot may declare: a small, highly compressed file must not claim a
/// picture that would exhaust whoever decodes it.
pub const IMAGE_PIXELS_MAX: u64 = 100_000_000;

/// Width and height from the image's header, read by the format's own decoder (PNG's IHDR with its
/// checksum, JPEG's frame header, WebP's frame or canvas header), so bytes that only start like an
/// image give `None`. `data` may be the start of the file; a header that lies past it gives `None`
/// too (the caller can retry with the whole file). Sizes outside [`IMAGE_SIDE_MAX`] and
/// [`IMAGE_PIXELS_MAX`] give `None`.
pub fn image_dimensions(data: &[u8]) -> Option<(i64, i64)> {
    use std::io::Cursor;
    let (width, height) = match image_type(data)? {
        "image/png" => {
            // The header chunk alone: `read_info` would also set up the decoder's row buffers
            // (hundreds of KB for a screenshot) that only decoding the pixels needs.
            let mut decoder = png::Decoder::new(Cursor::new(data));
            let info = decoder.read_header_info().ok()?;
            (info.width, info.height)
        }
        "image/jpeg" => {
            let mut decoder = zune_jpeg::JpegDecoder::new(Cursor::new(data));
            decoder.decode_headers().ok()?;
            let (w, h) = decoder.dimensions()?;
            (u32::try_from(w).ok()?, u32::try_from(h).ok()?)
        }
        _ => image_webp::WebPDecoder::new(Cursor::new(data)).ok()?.dimensions(),
    };
    let plausible = (1..=IMAGE_SIDE_MAX).contains(&width)
        && (1..=IMAGE_SIDE_MAX).contains(&height)
        && u64::from(width) * u64::from(height) <= IMAGE_PIXELS_MAX;
    plausible.then_some((i64::from(width), i64::from(height)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_1X1: &[u8] = &[
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
        0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x06, 0x00, 0x00, 0x00,
    ];

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&vec![0x80; (width * height * 3) as usize]).unwrap();
        writer.finish().unwrap();
        out
    }

    fn webp(width: u32, height: u32) -> Vec<u8> {
        let mut out = Vec::new();
        image_webp::WebPEncoder::new(&mut out)
            .encode(&vec![0x80; (width * height * 3) as usize], width, height, image_webp::ColorType::Rgb8)
            .unwrap();
        out
    }

    /// A baseline JPEG's frame header says 7x5; the scan data is never read for the size.
    fn jpeg_header(width: u16, height: u16) -> Vec<u8> {
        let mut out = vec![0xFF, 0xD8];
        // DQT: one table of 64 ones.
        out.extend_from_slice(&[0xFF, 0xDB, 0x00, 0x43, 0x00]);
        out.extend_from_slice(&[1; 64]);
        // SOF0: 8-bit, height, width, one component (id 1, 1x1 sampling, table 0).
        out.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x0B, 0x08]);
        out.extend_from_slice(&height.to_be_bytes());
        out.extend_from_slice(&width.to_be_bytes());
        out.extend_from_slice(&[0x01, 0x01, 0x11, 0x00]);
        // DHT: a DC and an AC table with one code each.
        for class in [0x00u8, 0x10] {
            out.extend_from_slice(&[0xFF, 0xC4, 0x00, 0x14, class, 1]);
            out.extend_from_slice(&[0; 15]);
            out.push(0);
        }
        // SOS, then one byte of scan data and EOI.
        out.extend_from_slice(&[0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00, 0x00, 0xFF, 0xD9]);
        out
    }

    #[test]
    fn image_sizes_come_from_a_decoded_header() {
        assert_eq!(image_dimensions(&png(3, 2)), Some((3, 2)));
        // The decoder needs only the start of the file.
        let big = png(400, 170);
        assert_eq!(image_dimensions(&big[..200]), Some((400, 170)));
        assert_eq!(image_dimensions(&webp(5, 4)), Some((5, 4)));
        assert_eq!(image_dimensions(&jpeg_header(7, 5)), Some((7, 5)));

        // PNG's magic followed by HTML: the bytes after the magic read as a huge width.
        let mut fake = b"\x89PNG\r\n\x1a\n".to_vec();
        fake.extend_from_slice(b"\0\0\0\rIHDRcxx\0\0\0\x10<html><script>alert(1)</script></html>");
        assert_eq!(image_dimensions(&fake), None);
        // A real header whose checksum no longer matches.
        let mut tampered = png(3, 2);
        tampered[19] = 0x7F; // width becomes 0x7F000003
        assert_eq!(image_dimensions(&tampered), None);
        assert_eq!(image_dimensions(PNG_1X1), None, "cut off inside its header");
        assert_eq!(image_dimensions(&jpeg_header(7, 5)[..30]), None);
        assert_eq!(image_dimensions(b"RIFF\0\0\0\0WEBPVP8 "), None);
        // Plausible sizes only.
        assert_eq!(image_dimensions(&png(IMAGE_SIDE_MAX + 1, 1)), None);
    }

    #[test]
    fn screenshots_are_typed_by_their_bytes() {
        assert_eq!(detect(BlobKind::Screenshot, PNG_1X1, Some("image/jpeg")).as_deref(), Some("image/png"));
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
