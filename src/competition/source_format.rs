//! How a source CSV is read: its text encoding, field delimiter and decimal mark (the
//! manifest's `[source.format]`), and how [`detect`] finds them on import.
//!
//! Detection follows the original ML2B release's `read_csv_smart` (pandas with a comma,
//! then with `;`, then a sniffed delimiter with the encoding `charset_normalizer` reports):
//! * **encoding**: UTF-8 when the bytes are valid UTF-8 (a leading byte-order mark is
//!   skipped), as pandas' default read succeeds; otherwise one single-byte Windows code page.
//!   `charset_normalizer` ranks candidate code pages by how "messy" and how coherent the
//!   decoded text is; ml2b's stand-in knows two: **windows-1251** when most non-ASCII bytes
//!   stand in runs of three or more (whole words outside ASCII: Cyrillic, which read as
//!   windows-1252 would be all accented Latin letters, what charset_normalizer rejects as
//!   mess), else **windows-1252** (accents inside Latin words); a page that leaves a byte
//!   undefined is not taken. Other encodings (UTF-16, other code pages) are refused or
//!   misread: the detected one is recorded, so a wrong guess is visible and can be fixed in
//!   the manifest;
//! * **delimiter**: the first of `,` `;` tab `|` with which every record has the header's
//!   number of fields and the header names every required column (the targets): `,` and
//!   `;` in the original's order, then the delimiters its sniffer commonly finds;
//! * **decimal mark**: `,` when the delimiter is not a comma and some column holds numbers
//!   written with a decimal comma (`3,5`, `-0,25`, `1,5e3`) and otherwise only integers or
//!   empty fields; those numbers are rewritten with a point (`3.5`). The original does not
//!   do this (pandas without `decimal=","` reads such a column as text), so an import
//!   records it as a fix.
//!
//! Reading with a format ([`decode`], [`decimal_comma_columns`]) is exact and needs no
//! detection: `ml2b prepare` reads a source as its manifest says, and the built files are
//! always UTF-8, comma-separated, with a decimal point.

use crate::manifest::competition::{DELIMITERS, Encoding, SourceFormat};

/// What [`detect`] found, with the evidence an import note reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detected {
    pub format: SourceFormat,
    /// The UTF-8 text began with a byte-order mark.
    pub bom: bool,
    /// The columns whose decimal commas are rewritten (when `format.decimal` is `,`).
    pub decimal_columns: Vec<String>,
}

/// Detects the format of a source CSV whose header must name `required` (see the module
/// docs). An error says why the bytes cannot be read as text.
pub fn detect(bytes: &[u8], required: &[String]) -> Result<Detected, String> {
    let encoding = detect_encoding(bytes)?;
    let text = decode(bytes, encoding)?;
    let delimiter = DELIMITERS
        .into_iter()
        .find(|&d| fits(&text, d, required))
        .unwrap_or(',');
    let mut decimal_columns = Vec::new();
    if delimiter != ',' {
        let (header, rows) = records(&text, delimiter).map_err(|e| e.to_string())?;
        decimal_columns = decimal_comma_columns(&rows, header.len())
            .into_iter()
            .map(|c| header[c].clone())
            .collect();
    }
    Ok(Detected {
        format: SourceFormat {
            encoding,
            delimiter,
            decimal: if decimal_columns.is_empty() { '.' } else { ',' },
        },
        bom: encoding == Encoding::Utf8 && bytes.starts_with(BOM),
        decimal_columns,
    })
}

const BOM: &[u8] = b"\xef\xbb\xbf";

/// UTF-8 when valid, else the single-byte code page the module docs describe.
pub fn detect_encoding(bytes: &[u8]) -> Result<Encoding, String> {
    if bytes.starts_with(b"\xff\xfe") || bytes.starts_with(b"\xfe\xff") {
        return Err("is UTF-16 text, which ml2b does not read: save it as UTF-8".into());
    }
    if std::str::from_utf8(bytes).is_ok() {
        return Ok(Encoding::Utf8);
    }
    let (mut in_words, mut high) = (0usize, 0usize);
    for run in bytes.split(|b| b.is_ascii()).filter(|r| !r.is_empty()) {
        high += run.len();
        if run.len() >= 3 {
            in_words += run.len();
        }
    }
    let order = if in_words * 2 > high {
        [Encoding::Windows1251, Encoding::Windows1252]
    } else {
        [Encoding::Windows1252, Encoding::Windows1251]
    };
    order
        .into_iter()
        .find(|&e| undefined_byte(bytes, e).is_none())
        .ok_or_else(|| {
            let at = undefined_byte(bytes, order[0]).unwrap_or_default();
            format!(
                "is neither UTF-8 nor windows-1251 nor windows-1252 text (byte 0x{:02X} at offset {at})",
                bytes[at]
            )
        })
}

fn undefined_byte(bytes: &[u8], encoding: Encoding) -> Option<usize> {
    let table = match encoding {
        Encoding::Utf8 => return None,
        Encoding::Windows1251 => &WINDOWS_1251,
        Encoding::Windows1252 => &WINDOWS_1252,
    };
    bytes
        .iter()
        .position(|&b| b >= 0x80 && table[usize::from(b - 0x80)] == 0)
}

/// The bytes as text in `encoding` (a UTF-8 byte-order mark is dropped). An error names the
/// first byte that is not text in that encoding.
pub fn decode(bytes: &[u8], encoding: Encoding) -> Result<String, String> {
    let table = match encoding {
        Encoding::Utf8 => {
            let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
            return std::str::from_utf8(bytes).map(str::to_string).map_err(|e| {
                format!(
                    "is not UTF-8 text (byte offset {}); give its [source.format] encoding",
                    e.valid_up_to()
                )
            });
        }
        Encoding::Windows1251 => &WINDOWS_1251,
        Encoding::Windows1252 => &WINDOWS_1252,
    };
    if let Some(at) = undefined_byte(bytes, encoding) {
        return Err(format!(
            "byte 0x{:02X} at offset {at} is not defined in {encoding}",
            bytes[at]
        ));
    }
    Ok(bytes
        .iter()
        .map(|&b| match b {
            0..0x80 => char::from(b),
            _ => char::from_u32(table[usize::from(b - 0x80)]).expect("the tables hold characters"),
        })
        .collect())
}

/// Every record has the header's field count and the header names every required column.
fn fits(text: &str, delimiter: char, required: &[String]) -> bool {
    let mut reader = reader(text, delimiter);
    let Ok(header) = reader.headers() else {
        return false;
    };
    if !required.iter().all(|r| header.iter().any(|h| h == r)) {
        return false;
    }
    reader.records().all(|r| r.is_ok())
}

fn reader(text: &str, delimiter: char) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .delimiter(u8::try_from(delimiter).expect("the delimiters are ASCII"))
        .from_reader(text.as_bytes())
}

fn records(text: &str, delimiter: char) -> Result<(Vec<String>, Vec<csv::StringRecord>), csv::Error> {
    let mut reader = reader(text, delimiter);
    let header = reader.headers()?.iter().map(str::to_string).collect();
    let rows = reader.records().collect::<Result<_, _>>()?;
    Ok((header, rows))
}

/// The columns (of `width`) that hold at least one number written with a decimal comma and
/// otherwise only integers and empty fields.
pub fn decimal_comma_columns(rows: &[csv::StringRecord], width: usize) -> Vec<usize> {
    (0..width)
        .filter(|&c| {
            let mut comma = false;
            for row in rows {
                let v = row.get(c).unwrap_or("").trim();
                if v.is_empty() || is_integer(v) {
                    continue;
                }
                if !is_decimal_comma(v) {
                    return false;
                }
                comma = true;
            }
            comma
        })
        .collect()
}

/// `v` with its decimal comma as a point, if it is a decimal-comma number.
pub fn with_decimal_point(v: &str) -> Option<String> {
    is_decimal_comma(v.trim()).then(|| v.replacen(',', ".", 1))
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn unsigned(s: &str) -> &str {
    s.strip_prefix(['+', '-']).unwrap_or(s)
}

fn is_integer(v: &str) -> bool {
    digits(unsigned(v))
}

/// `[+-]digits*,digits+([eE][+-]?digits+)?`
fn is_decimal_comma(v: &str) -> bool {
    let Some((int, rest)) = unsigned(v).split_once(',') else {
        return false;
    };
    let (frac, exp) = match rest.split_once(['e', 'E']) {
        Some((f, e)) => (f, Some(e)),
        None => (rest, None),
    };
    (int.is_empty() || digits(int)) && digits(frac) && exp.is_none_or(|e| digits(unsigned(e)))
}

/// windows-1251, bytes 0x80–0xFF (0: undefined).
const WINDOWS_1251: [u32; 128] = [
    0x0402, 0x0403, 0x201A, 0x0453, 0x201E, 0x2026, 0x2020, 0x2021, //
    0x20AC, 0x2030, 0x0409, 0x2039, 0x040A, 0x040C, 0x040B, 0x040F, //
    0x0452, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, //
    0, 0x2122, 0x0459, 0x203A, 0x045A, 0x045C, 0x045B, 0x045F, //
    0x00A0, 0x040E, 0x045E, 0x0408, 0x00A4, 0x0490, 0x00A6, 0x00A7, //
    0x0401, 0x00A9, 0x0404, 0x00AB, 0x00AC, 0x00AD, 0x00AE, 0x0407, //
    0x00B0, 0x00B1, 0x0406, 0x0456, 0x0491, 0x00B5, 0x00B6, 0x00B7, //
    0x0451, 0x2116, 0x0454, 0x00BB, 0x0458, 0x0405, 0x0455, 0x0457, //
    0x0410, 0x0411, 0x0412, 0x0413, 0x0414, 0x0415, 0x0416, 0x0417, //
    0x0418, 0x0419, 0x041A, 0x041B, 0x041C, 0x041D, 0x041E, 0x041F, //
    0x0420, 0x0421, 0x0422, 0x0423, 0x0424, 0x0425, 0x0426, 0x0427, //
    0x0428, 0x0429, 0x042A, 0x042B, 0x042C, 0x042D, 0x042E, 0x042F, //
    0x0430, 0x0431, 0x0432, 0x0433, 0x0434, 0x0435, 0x0436, 0x0437, //
    0x0438, 0x0439, 0x043A, 0x043B, 0x043C, 0x043D, 0x043E, 0x043F, //
    0x0440, 0x0441, 0x0442, 0x0443, 0x0444, 0x0445, 0x0446, 0x0447, //
    0x0448, 0x0449, 0x044A, 0x044B, 0x044C, 0x044D, 0x044E, 0x044F, //
];

/// windows-1252, bytes 0x80–0xFF (0: undefined).
const WINDOWS_1252: [u32; 128] = [
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, //
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0, //
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, //
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178, //
    0x00A0, 0x00A1, 0x00A2, 0x00A3, 0x00A4, 0x00A5, 0x00A6, 0x00A7, //
    0x00A8, 0x00A9, 0x00AA, 0x00AB, 0x00AC, 0x00AD, 0x00AE, 0x00AF, //
    0x00B0, 0x00B1, 0x00B2, 0x00B3, 0x00B4, 0x00B5, 0x00B6, 0x00B7, //
    0x00B8, 0x00B9, 0x00BA, 0x00BB, 0x00BC, 0x00BD, 0x00BE, 0x00BF, //
    0x00C0, 0x00C1, 0x00C2, 0x00C3, 0x00C4, 0x00C5, 0x00C6, 0x00C7, //
    0x00C8, 0x00C9, 0x00CA, 0x00CB, 0x00CC, 0x00CD, 0x00CE, 0x00CF, //
    0x00D0, 0x00D1, 0x00D2, 0x00D3, 0x00D4, 0x00D5, 0x00D6, 0x00D7, //
    0x00D8, 0x00D9, 0x00DA, 0x00DB, 0x00DC, 0x00DD, 0x00DE, 0x00DF, //
    0x00E0, 0x00E1, 0x00E2, 0x00E3, 0x00E4, 0x00E5, 0x00E6, 0x00E7, //
    0x00E8, 0x00E9, 0x00EA, 0x00EB, 0x00EC, 0x00ED, 0x00EE, 0x00EF, //
    0x00F0, 0x00F1, 0x00F2, 0x00F3, 0x00F4, 0x00F5, 0x00F6, 0x00F7, //
    0x00F8, 0x00F9, 0x00FA, 0x00FB, 0x00FC, 0x00FD, 0x00FE, 0x00FF, //
];

#[cfg(test)]
mod tests {
    use super::*;

    fn cp1251(text: &str) -> Vec<u8> {
        text.chars()
            .map(|c| match c as u32 {
                0..0x80 => c as u8,
                u => 0x80 + WINDOWS_1251.iter().position(|&t| t == u).expect("in the page") as u8,
            })
            .collect()
    }

    #[test]
    fn the_tables_agree_with_the_code_pages_letters() {
        assert_eq!(
            decode(&cp1251("Москва ёЁ №"), Encoding::Windows1251).unwrap(),
            "Москва ёЁ №"
        );
        assert_eq!(
            decode(b"caf\xe9 \x80 \x9f", Encoding::Windows1252).unwrap(),
            "café € Ÿ"
        );
        assert!(
            decode(b"\x98", Encoding::Windows1251)
                .unwrap_err()
                .contains("0x98")
        );
        assert!(decode(b"\x81", Encoding::Windows1252).is_err());
    }

    #[test]
    fn utf8_wins_then_cyrillic_words_then_latin_accents() {
        assert_eq!(detect_encoding("Москва".as_bytes()), Ok(Encoding::Utf8));
        assert_eq!(detect_encoding(b"\xef\xbb\xbfa,b"), Ok(Encoding::Utf8));
        assert_eq!(
            detect_encoding(&cp1251("город,цена\nМосква,1\nКазань,2\n")),
            Ok(Encoding::Windows1251)
        );
        assert_eq!(
            detect_encoding(b"ville,prix\nCr\xe9teil,1\nM\xfcnchen,2\n"),
            Ok(Encoding::Windows1252)
        );
        // 0x98 is undefined in windows-1251, so Cyrillic-looking runs holding it are 1252.
        assert_eq!(detect_encoding(b"\xc0\x98\xc1"), Ok(Encoding::Windows1252));
        assert!(detect_encoding(b"\xff\xfea\x00").unwrap_err().contains("UTF-16"));
    }

    #[test]
    fn delimiter_falls_back_and_decimal_commas_are_found() {
        let required = ["price".to_string()];
        let d = detect(
            &cp1251("город;площадь;комнаты;price\nМосква;45,5;2;12000000\nКазань;30;1;-0,5\n"),
            &required,
        )
        .unwrap();
        assert_eq!(
            d.format,
            SourceFormat {
                encoding: Encoding::Windows1251,
                delimiter: ';',
                decimal: ',',
            }
        );
        assert_eq!(d.decimal_columns, ["площадь", "price"]);
        let plain = detect(b"a,b,price\n1,x,2.5\n", &required).unwrap();
        assert!(plain.format.is_default() && !plain.bom);
        // A comma file never has decimal commas (a quoted "1,5" may be a list).
        let quoted = detect(b"a,price\n\"1,5\",2\n", &required).unwrap();
        assert_eq!(quoted.format.decimal, '.');
        let tab = detect(b"a\tprice\n1\t2\n", &required).unwrap();
        assert_eq!(tab.format.delimiter, '\t');
        assert_eq!(with_decimal_point(" 1,5e3"), Some(" 1.5e3".into()));
        assert_eq!(with_decimal_point("1,2,3"), None);
        assert_eq!(with_decimal_point("a,5"), None);
    }
}
