//! Each part of the rule language on a small hand-written HLO program and a Mosaic kernel: what a matcher key
//! or relation selects, and what it does not.

const HLO: &str = r#"HloModule lang, is_scheduled=true

%fused (p0: f8e4m3fn[64,64]) -> bf16[64,64] {
  %p0 = f8e4m3fn[64,64]{1,0} parameter(0)
  ROOT %cv = bf16[64,64]{1,0} convert(%p0)
}

%body (t: (s32[], f32[64,64])) -> (s32[], f32[64,64]) {
  %t = (s32[], f32[64,64]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %acc = f32[64,64]{1,0} get-tuple-element(%t), index=1
  %sq = f32[64,64]{1,0} multiply(%acc, %acc)
  ROOT %out = (s32[], f32[64,64]{1,0}) tuple(%i, %sq)
}

%cond (t: (s32[], f32[64,64])) -> pred[] {
  %t = (s32[], f32[64,64]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

ENTRY %main (w: f8e4m3fn[64,64], x: bf16[64,64], y: f32[64,64]) -> (f32[64,64], f32[64,64]) {
  %w = f8e4m3fn[64,64]{1,0} parameter(0)
  %x = bf16[64,64]{1,0} parameter(1)
  %y = f32[64,64]{1,0:S(1)} parameter(2), metadata={op_name="jit(f)/y" source_file="model.py" source_line=7}
  %f = bf16[64,64]{1,0} fusion(%w), kind=kLoop, calls=%fused
  %b = bf16[64,64]{1,0} bitcast(%f)
  %d1 = f32[64,64]{1,0} dot(%x, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot" source_file="model.py" source_line=12}
  %d2 = f32[64,64]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %zero = s32[] constant(0)
  %init = (s32[], f32[64,64]{1,0}) tuple(%zero, %d2)
  %loop = (s32[], f32[64,64]{1,0}) while(%init), condition=%cond, body=%body
  %r = f32[64,64]{1,0} get-tuple-element(%loop), index=1
  %s = f32[64,64]{1,0} add(%d1, %y)
  ROOT %res = (f32[64,64]{1,0}, f32[64,64]{1,0}) tuple(%s, %r)
}
"#;

/// The names of the ops a one-rule pack with `select` reports on `HLO`.
fn selected(select: &str) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("p.hlo"), HLO).unwrap();
    let pack = format!("pack: t\nrules:\n  - id: t\n    layer: hlo\n    severity: error\n    select: {select}\n    message: \"{{op.name}}\"\n");
    std::fs::write(tmp.path().join("t.yaml"), pack).unwrap();
    let out = crate::common::hlolint()
        .current_dir(tmp.path())
        .args(["--isolated", "--format", "json", "--rules", "t.yaml", "p.hlo"])
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert!(v["errors"].as_array().unwrap().is_empty(), "{}", v["errors"]);
    let mut names: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap().trim_start_matches('%').to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn atoms() {
    assert_eq!(selected("{ op: dot }"), ["d1", "d2"]);
    assert_eq!(selected("{ op: \"d*\" }"), ["d1", "d2"], "opcode globs");
    assert_eq!(selected("{ op: convert, from: \"f8*\", to: bf16 }"), ["cv"]);
    assert_eq!(selected("{ op: parameter, dtype: \"f8*\" }"), ["p0", "w"]);
    assert_eq!(selected("{ op: parameter, memory_space: \"S(1)\" }"), ["y"]);
    assert_eq!(selected("{ op: dot, metadata: { source_line: \"^12$\" } }"), ["d1"]);
    assert_eq!(selected("{ op: dot, name: \"2$\" }"), ["d2"]);
    assert_eq!(selected("{ op: constant, rank: 0, function: \"^cond$\" }"), ["n"]);
    assert_eq!(selected("{ op: fusion, attr: { kind: kLoop } }"), ["f"]);
    assert_eq!(selected("{ op: dot, no_attr: [metadata] }"), ["d2"]);
    assert_eq!(selected("{ op: dot, operand_dtype: bf16, not: { metadata: { op_name: dot } } }"), ["d2"]);
}

#[test]
fn operand_walks_through_pass_throughs_and_fusions() {
    // d1 reads %b = bitcast(%f), %f a fusion whose ROOT converts f8
    assert!(selected("{ op: dot, operand: { op: convert } }").is_empty(), "one step, no pass-through");
    assert!(
        selected("{ op: dot, operand: { through: [bitcast], op: convert } }").is_empty(),
        "the fusion is in the way"
    );
    assert_eq!(selected("{ op: dot, operand: { through: [bitcast, fusion], op: convert } }"), ["d1"]);
    assert_eq!(
        selected("{ op: dot, operand: { depth: 3, op: parameter, dtype: \"f8*\" } }"),
        ["d1"],
        "three steps: %b, %f, %w"
    );
    assert!(selected("{ op: dot, operand: { depth: 2, op: parameter, dtype: \"f8*\" } }").is_empty());
    assert_eq!(selected("{ op: dot, operand: { through: [bitcast, fusion, convert, fusion-parameter], op: parameter, dtype: \"f8*\", function: main } }"), ["d1"], "the fused parameter leads back out to %w");
    assert_eq!(selected("{ op: dot, operand: { index: 0, op: parameter } }"), ["d1", "d2"]);
    assert_eq!(selected("{ op: dot, operand: { index: 1, op: parameter } }"), ["d2"]);
}

#[test]
fn users_counts_and_quantifiers() {
    assert_eq!(
        selected("{ op: parameter, function: main, user: { op: dot, count: 2 } }"),
        ["x"],
        "x feeds d1 and d2 twice"
    );
    assert_eq!(selected("{ op: parameter, function: main, user: { op: dot, count: { min: 1 } } }"), ["x"]);
    assert_eq!(selected("{ op: dot, user: { op: add, count: 0 } }"), ["d2"], "count: 0 is `none`");
    assert_eq!(selected("{ op: dot, user: { every: true, op: tuple } }"), ["d2"]);
    assert_eq!(
        selected("{ op: convert, user: { through: [fusion, bitcast], op: dot } }"),
        ["cv"],
        "a ROOT flows out to the fusion's users"
    );
}

#[test]
fn inside_precedes_follows() {
    assert_eq!(selected("{ op: multiply, inside: { op: loop } }"), ["sq"], "a while body is inside the while");
    assert_eq!(selected("{ op: convert, inside: { op: fusion } }"), ["cv"]);
    assert!(selected("{ op: dot, inside: { op: loop } }").is_empty());
    assert_eq!(selected("{ op: dot, precedes: { op: loop } }"), ["d1", "d2"]);
    assert_eq!(selected("{ op: dot, follows: { op: dot } }"), ["d2"]);
    assert_eq!(selected("{ op: dot, any: [ { name: d1 }, { follows: { op: fusion } } ] }"), ["d1", "d2"]);
    assert_eq!(selected("{ op: dot, all: [ { follows: { op: fusion } }, { precedes: { op: add } } ] }"), ["d1", "d2"]);
}
