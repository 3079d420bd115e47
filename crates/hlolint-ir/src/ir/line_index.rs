//! Line and column of a byte offset: the one place that turns a span into what a person reads. Built once per
//! source text (the newline offsets, found with `memchr`), then each question is a binary search — a report that
//! places a thousand findings in a 100 MB LLO dump does not count newlines a thousand times.
//!
//! Lines are separated by `\n` alone (a `\r` before it is the line's last character, as editors that show the
//! column count it); lines and columns are 1-based and columns count characters, as the reports print them.

/// The start of every line of one text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of each line's first byte: `0`, then one past each `\n`.
    starts: Vec<usize>,
}

impl LineIndex {
    /// The index of `text` (bytes, so that input not yet known to be UTF-8 can be placed too).
    pub fn new(text: impl AsRef<[u8]>) -> LineIndex {
        let text = text.as_ref();
        let mut starts = Vec::with_capacity(1 + text.len() / 64);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
        LineIndex { starts }
    }

    /// 1-based line holding byte `offset` (the newline ending a line belongs to it; an offset past the end is on
    /// the last line).
    pub fn line(&self, offset: usize) -> usize {
        // `starts[0] == 0 <= offset`, so at least one start is counted: the result is never 0.
        self.starts.partition_point(|&s| s <= offset)
    }

    /// 1-based line and column of byte `offset` in `text`, the text this index was built from; the column counts
    /// characters, an offset inside a character being read as that character's start.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        self.line_col_bytes(text.as_bytes(), offset)
    }

    /// The bytes of 1-based `line` of `text` (the text this index was built from), without its line ending (`\n`
    /// or `\r\n`); `None` past the last line.
    pub fn line_range(&self, text: &str, line: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let mut end = self.starts.get(line).map_or(text.len(), |&next| next - 1);
        if end > start && text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        (start <= end && end <= text.len()).then_some(start..end)
    }

    /// As [`line_col`](Self::line_col) over bytes that may not be UTF-8 (an input being checked for it): each
    /// invalid sequence before `offset` on its line counts as one character, as a lossy decoding shows it.
    pub fn line_col_bytes(&self, bytes: &[u8], offset: usize) -> (usize, usize) {
        let offset = offset.min(bytes.len());
        let line = self.line(offset);
        let start = self.starts[line - 1];
        (line, String::from_utf8_lossy(&bytes[start..offset]).chars().count() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition the index replaces: newlines before the offset, characters since the last one.
    fn counted(text: &str, offset: usize) -> (usize, usize) {
        let before = &text[..offset];
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        (before.matches('\n').count() + 1, before[start..].chars().count() + 1)
    }

    #[test]
    fn agrees_with_counting_at_every_offset() {
        for text in ["", "\n", "a", "ab\ncd\n", "\n\nx", "é\nñu\r\nz", "line 1\nline 2\nline 3"] {
            let ix = LineIndex::new(text);
            for off in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
                assert_eq!(ix.line_col(text, off), counted(text, off), "{text:?} at {off}");
            }
        }
    }

    #[test]
    fn offsets_inside_a_character_or_past_the_end() {
        let text = "aé\nb";
        let ix = LineIndex::new(text);
        assert_eq!(ix.line_col(text, 2), (1, 2), "inside `é`: its start");
        assert_eq!(ix.line_col(text, 99), (2, 2));
        assert_eq!(ix.line(99), 2);
    }

    #[test]
    fn invalid_bytes_count_as_one_character_each() {
        let bytes = b"ok\n\xff\xfex\x00";
        let ix = LineIndex::new(bytes);
        assert_eq!(ix.line_col_bytes(bytes, 6), (2, 4));
    }

    #[test]
    fn a_line_range_leaves_its_ending_out_whatever_it_is() {
        for text in ["a = 1\n  b()\nc", "a = 1\r\n  b()\r\nc"] {
            let idx = LineIndex::new(text);
            let r = idx.line_range(text, 2).unwrap();
            assert_eq!(&text[r], "  b()", "{text:?}");
            assert_eq!(&text[idx.line_range(text, 3).unwrap()], "c");
            assert_eq!(idx.line_range(text, 0), None);
            assert_eq!(idx.line_range(text, 4), None);
        }
        assert_eq!(LineIndex::new("").line_range("", 1), Some(0..0));
    }
}
