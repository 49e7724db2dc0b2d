//! `maintainer/range_checker/table_span_range_checker_test.go`: whether reported
//! sub-ranges cover a table's span (the barrier's range checker). The model's key space
//! is `[0, TABLE_KEY_END)` per table and coverage is [`find_holes`]: covered when no
//! hole is left. Go's byte keys `0x00..=0xFF` of `NewTableSpanCoverageChecker(0x00,
//! 0xFF)` map linearly onto a table's key space ([`key`]).

use crate::types::*;

const T: TableId = 1;

/// Byte key `b` of a `[0x00, 0xFF)` coverage checker as a key of table `T`.
fn key(b: u64) -> u64 {
    b * (TABLE_KEY_END / 0xFF) + if b == 0xFF { TABLE_KEY_END % 0xFF } else { 0 }
}

fn sub(t: TableId, a: u64, b: u64) -> TableSpan {
    TableSpan { table_id: t, start: key(a), end: key(b) }
}

fn covered(t: TableId, reported: &[TableSpan]) -> bool {
    find_holes(t, reported).is_empty()
}

// table_span_range_checker_test.go:37 — a sub-range that is not the table's whole span
// does not cover it.
#[test]
fn ticdc_table_span_range_checker_TestTableSpanRangeChecker_AddSubRange() {
    let full = TableSpan::full(T);
    let reported = vec![TableSpan { table_id: T, start: full.start + 1, end: full.end - 1 }];
    assert!(!covered(T, &reported));
}

// table_span_range_checker_test.go:52 — table 0 whole and table 1 in three adjacent
// pieces cover both; after a reset nothing is covered; whole spans cover again.
#[test]
fn ticdc_table_span_range_checker_TestTableSpanRangeChecker_IsFullyCovered() {
    let tables = [0, 1];
    let mut reported: Vec<TableSpan> = vec![TableSpan::full(0)];
    let f1 = TableSpan::full(1);
    let (a, b) = (f1.start + 10, f1.start + 20);
    reported.push(TableSpan { table_id: 1, start: f1.start, end: a });
    reported.push(TableSpan { table_id: 1, start: a, end: b });
    reported.push(TableSpan { table_id: 1, start: b, end: f1.end });
    assert!(tables.iter().all(|t| covered(*t, &reported)));
    reported.clear();
    assert!(!tables.iter().all(|t| covered(*t, &reported)));
    reported.push(TableSpan::full(0));
    reported.push(TableSpan::full(1));
    assert!(tables.iter().all(|t| covered(*t, &reported)));
}

// table_span_range_checker_test.go:78 — a partial sub-range does not cover; nor does
// nothing after a reset.
#[test]
fn ticdc_table_span_range_checker_TestTableSpanRangeChecker_Reset() {
    let full = TableSpan::full(T);
    let mut reported = vec![TableSpan { table_id: T, start: full.start + 1, end: full.end - 1 }];
    assert!(!covered(T, &reported));
    reported.clear();
    assert!(!covered(T, &reported));
}

// table_span_range_checker_test.go:93 — adjacent and overlapping sub-ranges accumulate;
// covered once the last piece arrives.
#[test]
fn ticdc_table_span_range_checker_TestSpanCoverageChecker_AddSubRange() {
    let mut reported = vec![sub(T, 0x00, 0x10), sub(T, 0x10, 0x20)];
    assert!(!covered(T, &reported));
    reported.push(sub(T, 0x00, 0x20));
    assert!(!covered(T, &reported));
    reported.push(sub(T, 0x20, 0xFF));
    assert!(covered(T, &reported));
}

// table_span_range_checker_test.go:115 — nothing covers nothing; two halves cover; a
// prefix alone does not.
#[test]
fn ticdc_table_span_range_checker_TestSpanCoverageChecker_IsFullyCovered() {
    let mut reported = vec![];
    assert!(!covered(T, &reported));
    reported.push(sub(T, 0x00, 0x7F));
    reported.push(sub(T, 0x7F, 0xFF));
    assert!(covered(T, &reported));
    reported.clear();
    reported.push(sub(T, 0x00, 0x50));
    assert!(!covered(T, &reported));
}

// table_span_range_checker_test.go:135 — covered, then empty after a reset. (Go also
// checks its interval tree is empty: the model has no tree.)
#[test]
fn ticdc_table_span_range_checker_TestSpanCoverageChecker_Reset() {
    let mut reported = vec![sub(T, 0x00, 0x50), sub(T, 0x50, 0xFF)];
    assert!(covered(T, &reported));
    reported.clear();
    assert!(!covered(T, &reported));
    assert_eq!(reported.len(), 0);
}
