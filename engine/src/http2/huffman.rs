//! HPACK's Huffman code (RFC 7541 Appendix B). The code is canonical, so the table is only each
//! symbol's code length; the codes follow from the lengths. Decoding looks the next 9 bits up in a
//! table of the codes that short (every letter, digit and the usual punctuation: one load a
//! symbol); a longer code compares the next bits with each length's upper limit, shortest first.

use std::sync::OnceLock;

/// Code length in bits of each symbol 0..=255 and of EOS (256), from RFC 7541 Appendix B.
const CODE_BITS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28,
    28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12,
    10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6,
    5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22,
    22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20,
    22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28,
    27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28,
    27, 27, 27, 27, 27, 26, 30,
];
const MIN_BITS: usize = 5;
const MAX_BITS: usize = 30;
const EOS: u16 = 256;
/// Codes up to this long are decoded by one table lookup.
const SHORT_BITS: usize = 9;
/// A `short` entry's low bits: the code's length (0: no code that short starts with these bits).
const SHORT_LEN_MASK: u16 = 0xf;

/// The canonical code, derived once from `CODE_BITS`.
struct Code {
    /// Each symbol's code (right-aligned).
    codes: [u32; 257],
    /// Per length: one past the largest code of that length, left-aligned to `MAX_BITS`.
    limit: [u32; MAX_BITS + 1],
    /// Per length: the first code of that length and where its symbols start in `sorted`.
    first: [u32; MAX_BITS + 1],
    offset: [u16; MAX_BITS + 1],
    /// Symbols by (length, symbol): canonical order.
    sorted: [u16; 257],
    /// By the next `SHORT_BITS` bits: symbol << 4 | length, for codes of at most `SHORT_BITS`.
    short: [u16; 1 << SHORT_BITS],
}

fn code() -> &'static Code {
    static CODE: OnceLock<Code> = OnceLock::new();
    CODE.get_or_init(|| {
        let mut sorted: [u16; 257] = std::array::from_fn(|s| s as u16);
        sorted.sort_by_key(|&s| (CODE_BITS[s as usize], s));
        let mut code = Code {
            codes: [0; 257],
            limit: [0; MAX_BITS + 1],
            first: [0; MAX_BITS + 1],
            offset: [0; MAX_BITS + 1],
            sorted,
            short: [0; 1 << SHORT_BITS],
        };
        let (mut next, mut bits) = (0u32, MIN_BITS);
        let mut group_bits = 0;
        for (k, &symbol) in sorted.iter().enumerate() {
            let len = usize::from(CODE_BITS[usize::from(symbol)]);
            next <<= len - bits;
            bits = len;
            if len != group_bits {
                (code.first[len], code.offset[len], group_bits) = (next, k as u16, len);
            }
            code.codes[usize::from(symbol)] = next;
            next += 1;
            code.limit[len] = next << (MAX_BITS - len);
        }
        // A length without codes takes the limit of the next shorter one: its compare never matches.
        for len in MIN_BITS + 1..=MAX_BITS {
            if code.limit[len] == 0 {
                code.limit[len] = code.limit[len - 1];
            }
        }
        for symbol in 0..EOS {
            let len = usize::from(CODE_BITS[usize::from(symbol)]);
            if len <= SHORT_BITS {
                let first = (code.codes[usize::from(symbol)] as usize) << (SHORT_BITS - len);
                code.short[first..first + (1 << (SHORT_BITS - len))].fill(symbol << 4 | len as u16);
            }
        }
        code
    })
}

/// A Huffman string that is not valid: EOS inside it, or padding that is not EOS's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HuffmanError;

/// Decode `input`, appending to `out`.
pub fn decode(input: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    let code = code();
    let mut acc: u64 = 0;
    let mut have: usize = 0;
    let mut bytes = input.iter();
    loop {
        while have <= 56 {
            match bytes.next() {
                Some(&b) => {
                    acc |= u64::from(b) << (56 - have);
                    have += 8;
                }
                None => break,
            }
        }
        if have == 0 {
            return Ok(());
        }
        let entry = code.short[(acc >> (64 - SHORT_BITS)) as usize];
        let short_len = usize::from(entry & SHORT_LEN_MASK);
        if short_len != 0 && short_len <= have {
            out.push((entry >> 4) as u8);
            acc <<= short_len;
            have -= short_len;
            continue;
        }
        let peek = (acc >> (64 - MAX_BITS)) as u32;
        let Some(len) = (MIN_BITS..=MAX_BITS).find(|&len| peek < code.limit[len]) else { return Err(HuffmanError) };
        if len > have {
            // What is left is padding: fewer than 8 bits, all ones (EOS's most significant bits).
            let all_ones = (1u64 << have) - 1;
            return if have < 8 && (acc >> (64 - have)) == all_ones { Ok(()) } else { Err(HuffmanError) };
        }
        let value = peek >> (MAX_BITS - len);
        let symbol = code.sorted[usize::from(code.offset[len]) + (value - code.first[len]) as usize];
        if symbol == EOS {
            return Err(HuffmanError);
        }
        out.push(symbol as u8);
        acc <<= len;
        have -= len;
    }
}

/// The encoded length of `input` in bytes.
pub fn encoded_len(input: &[u8]) -> usize {
    input.iter().map(|&b| usize::from(CODE_BITS[usize::from(b)])).sum::<usize>().div_ceil(8)
}

/// Encode `input`, appending to `out`; the last byte is padded with ones.
pub fn encode(input: &[u8], out: &mut Vec<u8>) {
    let code = code();
    let (mut acc, mut have) = (0u64, 0usize);
    for &b in input {
        let len = usize::from(CODE_BITS[usize::from(b)]);
        acc = (acc << len) | u64::from(code.codes[usize::from(b)]);
        have += len;
        while have >= 8 {
            have -= 8;
            out.push((acc >> have) as u8);
        }
    }
    if have > 0 {
        out.push(((acc << (8 - have)) as u8) | (0xff >> have));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(input: &[u8]) -> Result<Vec<u8>, HuffmanError> {
        let mut out = Vec::new();
        decode(input, &mut out).map(|()| out)
    }

    #[test]
    fn the_rfc_examples_decode_and_encode() {
        // RFC 7541 C.4.1 and C.6.1.
        let cases: [(&[u8], &[u8]); 3] = [
            (b"www.example.com", &[0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff]),
            (b"no-cache", &[0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf]),
            (b"302", &[0x64, 0x02]),
        ];
        for (plain, huffman) in cases {
            assert_eq!(decoded(huffman).unwrap(), plain);
            let mut out = Vec::new();
            encode(plain, &mut out);
            assert_eq!(out, huffman);
            assert_eq!(encoded_len(plain), huffman.len());
        }
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).chain((0..=255).rev()).collect();
        let mut out = Vec::new();
        encode(&all, &mut out);
        assert_eq!(decoded(&out).unwrap(), all);
    }

    #[test]
    fn bad_padding_and_eos_are_refused() {
        // "0" is 00000 (5 bits); padding with zeros is not EOS's prefix.
        assert_eq!(decoded(&[0x00]), Err(HuffmanError));
        // A whole byte of ones is padding longer than 7 bits.
        assert_eq!(decoded(&[0x07, 0xff]), Err(HuffmanError));
        // EOS itself (30 ones).
        assert_eq!(decoded(&[0xff, 0xff, 0xff, 0xff]), Err(HuffmanError));
    }
}
