//! The standard workload, generated deterministically and byte-exact. Each file is a valid file of
//! its format, padded to the size the studies used with bytes from a fixed-seed generator, so
//! that compression or caching of repeated content cannot flatter a server.

/// One file of the standard workload.
pub struct WorkloadFile {
    pub name: &'static str,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

/// ST-1: the thesis's test page (appendix A.2.1.1), 168 bytes.
pub const WEBTEST_HTML: &str = "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.0 Transitional//EN\">\n<html>\n<head>\n<title>Webserver test</title>\n</head>\n<body>\nThis is a webserver test page.\n</body>\n</html>";

pub const IMAGE_SMALL_GIF_BYTES: usize = 7_500;
pub const IMAGE_LARGE_JPG_BYTES: usize = 83_572;
pub const IMAGE_PNG_BYTES: usize = 10_240;

/// splitmix64: a tiny generator with a fixed seed per file.
pub(crate) struct Filler(pub(crate) u64);

impl Filler {
    pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// ST-2: a 1x1 GIF89a whose comment extension blocks carry the padding.
fn gif(size: usize) -> Vec<u8> {
    let mut out = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff".to_vec();
    let image: &[u8] = b"\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00";
    // Comment extension: 0x21 0xFE, sub-blocks of up to 255 bytes, a 0 terminator.
    let mut comment_bytes = size - out.len() - image.len() - 1 - 3;
    out.extend_from_slice(b"\x21\xfe");
    let mut filler = Filler(0x6769_6600);
    while comment_bytes > 0 {
        // A sub-block costs one length byte plus its data.
        let data = (comment_bytes - 1).min(255);
        if data == 0 {
            break;
        }
        out.push(data as u8);
        out.extend(filler.bytes(data));
        comment_bytes -= data + 1;
    }
    out.push(0);
    out.extend_from_slice(image);
    out.push(0x3b);
    out.resize(size, 0);
    out
}

/// A JPEG marker segment: marker, big-endian length (which counts itself), data.
fn jpeg_segment(out: &mut Vec<u8>, marker: u8, data: &[u8]) {
    out.extend_from_slice(&[0xff, marker]);
    out.extend_from_slice(&((data.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(data);
}

/// ST-3: a minimal baseline JPEG (8x8 grey) whose COM segments carry the padding.
fn jpeg(size: usize) -> Vec<u8> {
    let mut image = Vec::new();
    let mut quantisation = vec![0u8];
    quantisation.extend([1u8; 64]);
    jpeg_segment(&mut image, 0xdb, &quantisation);
    jpeg_segment(&mut image, 0xc0, &[8, 0, 8, 0, 8, 1, 1, 0x11, 0]);
    // One Huffman code each: DC difference 0, and AC end-of-block.
    for class in [0x00, 0x10] {
        let mut table = vec![class, 1];
        table.extend([0u8; 15]);
        table.push(0);
        jpeg_segment(&mut image, 0xc4, &table);
    }
    jpeg_segment(&mut image, 0xda, &[1, 1, 0x00, 0, 0x3f, 0]);
    // DC code 0 then EOB code 0, padded with one-bits; then end of image.
    image.extend_from_slice(&[0x3f, 0xff, 0xd9]);

    let mut out = vec![0xff, 0xd8];
    let mut filler = Filler(0x6a70_6567);
    let mut padding = size - 2 - image.len();
    while padding > 0 {
        let data = (padding - 4).min(65_533);
        jpeg_segment(&mut out, 0xfe, &filler.bytes(data));
        padding -= data + 4;
    }
    out.extend_from_slice(&image);
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// DM: a 1x1 PNG whose private ancillary chunk `gaNt` carries the padding.
fn png(size: usize) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    png_chunk(&mut out, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
    // zlib stream of one filter byte and one grey pixel, stored uncompressed.
    let pixels = [0u8, 0x80];
    let mut idat = vec![0x78, 0x01, 0x01, 0x02, 0x00, 0xfd, 0xff];
    idat.extend_from_slice(&pixels);
    let adler = {
        let (mut a, mut b) = (1u32, 0u32);
        for &p in &pixels {
            a = (a + u32::from(p)) % 65_521;
            b = (b + a) % 65_521;
        }
        (b << 16) | a
    };
    idat.extend_from_slice(&adler.to_be_bytes());
    let fixed = out.len() + (12 + idat.len()) + 12 + 12;
    let padding = Filler(0x706e_6700).bytes(size - fixed);
    png_chunk(&mut out, b"gaNt", &padding);
    png_chunk(&mut out, b"IDAT", &idat);
    png_chunk(&mut out, b"IEND", &[]);
    out
}

pub fn standard_files() -> Vec<WorkloadFile> {
    vec![
        WorkloadFile { name: "webtest.html", content_type: "text/html", body: WEBTEST_HTML.as_bytes().to_vec() },
        WorkloadFile { name: "image_small.gif", content_type: "image/gif", body: gif(IMAGE_SMALL_GIF_BYTES) },
        WorkloadFile { name: "image_large.jpg", content_type: "image/jpeg", body: jpeg(IMAGE_LARGE_JPG_BYTES) },
        WorkloadFile { name: "image_10k.png", content_type: "image/png", body: png(IMAGE_PNG_BYTES) },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> Vec<u8> {
        standard_files().into_iter().find(|f| f.name == name).unwrap().body
    }

    #[test]
    fn sizes_are_exact_and_stable() {
        assert_eq!(file("webtest.html").len(), 168);
        assert_eq!(file("image_small.gif").len(), IMAGE_SMALL_GIF_BYTES);
        assert_eq!(file("image_large.jpg").len(), IMAGE_LARGE_JPG_BYTES);
        assert_eq!(file("image_10k.png").len(), IMAGE_PNG_BYTES);
        assert_eq!(file("image_large.jpg"), file("image_large.jpg"));
    }

    #[test]
    fn gif_is_well_formed() {
        let gif = file("image_small.gif");
        assert!(gif.starts_with(b"GIF89a"));
        assert_eq!(*gif.last().unwrap(), 0x3b);
        // Walk the blocks after the header and the 2-colour table.
        let mut at = 13 + 6;
        loop {
            match gif[at] {
                0x21 => {
                    at += 2;
                    while gif[at] != 0 {
                        at += 1 + gif[at] as usize;
                    }
                    at += 1;
                }
                0x2c => {
                    at += 10 + 1;
                    while gif[at] != 0 {
                        at += 1 + gif[at] as usize;
                    }
                    at += 1;
                }
                0x3b => break,
                other => panic!("unexpected block {other:#x} at {at}"),
            }
        }
        assert_eq!(at, gif.len() - 1);
    }

    #[test]
    fn jpeg_segments_chain_to_the_end() {
        let jpg = file("image_large.jpg");
        assert_eq!(&jpg[..2], &[0xff, 0xd8]);
        assert_eq!(&jpg[jpg.len() - 2..], &[0xff, 0xd9]);
        let mut at = 2;
        while jpg[at + 1] != 0xda {
            assert_eq!(jpg[at], 0xff);
            at += 2 + u16::from_be_bytes([jpg[at + 2], jpg[at + 3]]) as usize;
        }
        assert_eq!(jpg.len() - at, 10 + 1 + 2, "the entropy-coded scan and EOI follow the SOS segment");
    }

    #[test]
    fn png_chunks_have_valid_crcs() {
        let png = file("image_10k.png");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        let mut at = 8;
        let mut kinds = Vec::new();
        while at < png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
            assert_eq!(crc, crc32(&png[at + 4..at + 8 + len]));
            kinds.push(String::from_utf8_lossy(&png[at + 4..at + 8]).to_string());
            at += 12 + len;
        }
        assert_eq!(kinds, ["IHDR", "gaNt", "IDAT", "IEND"]);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }
}
