use super::*;
use crate::parse::hlo::parse_hlo;

fn hits(text: &str) -> Vec<Hit> {
    let m = parse_hlo("t.hlo", text).expect("parses");
    check_module(&m, 0)
}

fn kinds(text: &str) -> Vec<String> {
    hits(text).iter().map(|h| h.captures["kind"].clone()).collect()
}

const SIMPLE_OK: &str = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT cd = f32[8]{0} copy-done(cs)
}
"#;

#[test]
fn a_start_with_its_done_is_balanced() {
    assert!(kinds(SIMPLE_OK).is_empty());
}

#[test]
fn a_start_without_done_is_never_done() {
    let t = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT n = f32[8]{0} negate(p)
}
"#;
    let h = hits(t);
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].captures["kind"], "never-done");
    assert_eq!(h[0].captures["start"], "%cs");
    assert!(h[0].captures["detail"].contains("never done"), "{}", h[0].captures["detail"]);
}

#[test]
fn done_twice_through_two_gte_paths() {
    let t = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  t = ((f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) tuple(cs, p)
  g1 = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(t), index=0
  g2 = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(t), index=0
  g3 = f32[8]{0} get-tuple-element(t), index=1
  d1 = f32[8]{0} copy-done(g1)
  d2 = f32[8]{0} copy-done(g2)
  ROOT r = (f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(d1, d2, g3)
}
"#;
    let h = hits(t);
    assert_eq!(kinds(t), vec!["done-twice"]);
    assert_eq!(h[0].labels.len(), 2, "both dones labelled");
    assert!(h[0].captures["done"].contains("%d1") && h[0].captures["done"].contains("%d2"));
}

#[test]
fn gte_of_another_index_does_not_follow_the_start() {
    let t = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  t = ((f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) tuple(cs, p)
  g0 = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(t), index=0
  g1 = f32[8]{0} get-tuple-element(t), index=1
  d = f32[8]{0} copy-done(g0)
  ROOT r = (f32[8]{0}, f32[8]{0}) tuple(d, g1)
}
"#;
    assert!(kinds(t).is_empty());
}

#[test]
fn an_orphan_done_has_no_start() {
    let t = r#"HloModule m
ENTRY e {
  p = (f32[8]{0}, f32[8]{0}, u32[]) parameter(0)
  ROOT d = f32[8]{0} copy-done(p)
}
"#;
    let h = hits(t);
    assert_eq!(kinds(t), vec!["done-without-start"]);
    assert_eq!(h[0].captures["done"], "%d");
}

#[test]
fn a_done_of_another_family_is_no_done() {
    let t = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT d = f32[8]{0} all-gather-done(cs)
}
"#;
    let mut k = kinds(t);
    k.sort();
    assert_eq!(k, vec!["done-without-start", "never-done"]);
}

#[test]
fn async_updates_continue_the_chain() {
    let t = r#"HloModule m
comp {
  a = f32[8]{0} parameter(0)
  ROOT n = f32[8]{0} negate(a)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  s = ((f32[8]{0}), f32[8]{0}, s32[]) async-start(p), calls=comp
  u = ((f32[8]{0}), f32[8]{0}, s32[]) async-update(s)
  ROOT d = f32[8]{0} async-done(u)
}
"#;
    assert!(kinds(t).is_empty());
}

const COND: &str = r#"HloModule m
then_b {
  a = (f32[8]{0}, f32[8]{0}, u32[]) parameter(0)
  ROOT d = f32[8]{0} copy-done(a)
}
else_b {
  b = (f32[8]{0}, f32[8]{0}, u32[]) parameter(0)
  ROOT z = f32[8]{0} constant({0,0,0,0,0,0,0,0})
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  c = pred[] parameter(1)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT r = f32[8]{0} conditional(c, cs, cs), true_computation=then_b, false_computation=else_b
}
"#;

#[test]
fn a_conditional_with_the_done_in_one_branch_is_unbalanced_on_the_other() {
    let h = hits(COND);
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0].captures["kind"], "never-done");
    assert!(h[0].captures["detail"].contains("%else_b"), "{}", h[0].captures["detail"]);
}

#[test]
fn a_conditional_with_the_done_in_every_branch_is_balanced() {
    let t = COND.replace("ROOT z = f32[8]{0} constant({0,0,0,0,0,0,0,0})", "ROOT z = f32[8]{0} copy-done(b)");
    assert!(kinds(&t).is_empty(), "{:?}", hits(&t));
}

/// Started before the loop and in each iteration for the next one; done at the top of each iteration and
/// after the loop (the pipelining XLA does for loop-carried prefetches).
const LOOP_OK: &str = r#"HloModule m
cond {
  cp = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  bp = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  prev = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(bp), index=1
  x = f32[8]{0} copy-done(prev)
  acc = f32[8]{0} get-tuple-element(bp), index=2
  acc1 = f32[8]{0} add(acc, x)
  next = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(acc1)
  ROOT out = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) tuple(i1, next, acc1)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  zero = s32[] constant(0)
  first = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  init = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) tuple(zero, first, p)
  w = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) while(init), condition=cond, body=body
  last = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(w), index=1
  ROOT r = f32[8]{0} copy-done(last)
}
"#;

#[test]
fn a_loop_carried_copy_is_balanced() {
    assert!(kinds(LOOP_OK).is_empty(), "{:?}", hits(LOOP_OK));
}

#[test]
fn a_loop_carried_copy_without_the_done_after_the_loop_is_never_done_on_exit() {
    let t = LOOP_OK.replace("ROOT r = f32[8]{0} copy-done(last)", "ROOT r = f32[8]{0} get-tuple-element(w), index=2");
    let h = hits(&t);
    assert!(h.iter().all(|h| h.captures["kind"] == "never-done"), "{h:?}");
    let starts: Vec<&str> = h.iter().map(|h| h.captures["start"].as_str()).collect();
    assert!(starts.contains(&"%next"), "the body's start is not done when the loop exits: {h:?}");
    let next = h.iter().find(|h| h.captures["start"] == "%next").unwrap();
    assert!(next.captures["detail"].contains("%w exits"), "{}", next.captures["detail"]);
}

#[test]
fn a_loop_that_carries_an_already_done_copy_does_it_twice() {
    // the body waits for the carried copy and carries the same (done) value on instead of a new start
    let t = LOOP_OK.replace("tuple(i1, next, acc1)", "tuple(i1, prev, acc1)");
    let h = hits(&t);
    let k: Vec<&str> = h.iter().map(|h| h.captures["kind"].as_str()).collect();
    assert!(k.contains(&"done-twice"), "{h:?}");
    assert!(h.iter().any(|h| h.captures["start"] == "%first" && h.captures["kind"] == "done-twice"));
    assert!(h.iter().any(|h| h.captures["start"] == "%next" && h.captures["kind"] == "never-done"));
}

#[test]
fn a_known_trip_count_removes_the_zero_trip_path() {
    // done only inside the body: with zero trips it would be pending; XLA proved one or more trips
    let t = LOOP_OK
        .replace(
            "condition=cond, body=body",
            r#"condition=cond, body=body, backend_config={"known_trip_count":{"n":"4"}}"#,
        )
        .replace("tuple(i1, next, acc1)", "tuple(i1, next, x)");
    let h = hits(&t);
    assert!(!h.iter().any(|h| h.captures["start"] == "%first"), "{h:?}");
}

#[test]
fn calls_are_followed() {
    let t = r#"HloModule m
waiter {
  a = (f32[8]{0}, f32[8]{0}, u32[]) parameter(0)
  ROOT d = f32[8]{0} copy-done(a)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT r = f32[8]{0} call(cs), to_apply=waiter
}
"#;
    assert!(kinds(t).is_empty(), "{:?}", hits(t));
}

#[test]
fn send_and_recv_pair_with_their_dones() {
    let t = r#"HloModule m
ENTRY e {
  tok = token[] after-all()
  r = (f32[8]{0}, u32[], token[]) recv(tok), channel_id=1
  rd = (f32[8]{0}, token[]) recv-done(r), channel_id=1
  ROOT x = f32[8]{0} get-tuple-element(rd), index=0
}
"#;
    assert!(kinds(t).is_empty(), "{:?}", hits(t));
    let t2 = t
        .replace("rd = (f32[8]{0}, token[]) recv-done(r), channel_id=1\n", "")
        .replace("get-tuple-element(rd)", "get-tuple-element(r)");
    assert_eq!(kinds(&t2), vec!["never-done"]);
}

#[test]
fn hand_written_cases_under_tests_data() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/async-balance");
    for (sub, want) in [("valid", false), ("invalid", true)] {
        let dir = root.join(sub);
        let mut n = 0;
        for p in crate::source::cases_in(&dir) {
            if p.extension().and_then(|x| x.to_str()) != Some("hlo") {
                continue;
            }
            n += 1;
            let text = std::fs::read_to_string(&p).unwrap();
            let h = hits(&text);
            assert_eq!(!h.is_empty(), want, "{}: {h:?}", p.display());
        }
        assert!(n >= 2, "{sub} cases");
    }
}

/// Every after-optimizations HLO of the corpus and of the project fixtures: no finding (real XLA output is
/// balanced), with the async pairs of transformer24@v5e (2,252 async-start, 50 copy-start) among them.
#[test]
fn real_hlo_has_no_finding() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![here.join("fixtures")];
    roots.extend(crate::testing::corpus());
    let mut files = 0;
    for root in roots {
        for e in walkdir::WalkDir::new(root).sort_by_file_name().into_iter().filter_map(Result::ok) {
            let p = e.path().display().to_string();
            if !(p.ends_with("after_optimizations.txt") || p.ends_with("_hlo.txt")) {
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap();
            let m = match parse_hlo(&p, &text) {
                Ok(m) => m,
                Err(_) => continue,
            };
            let t = std::time::Instant::now();
            let h = check_module(&m, 0);
            let starts =
                m.op_ids().filter(|&i| matches!(async_role(m.op(i).opcode), Some((_, AsyncRole::Start)))).count();
            eprintln!("{p}: {starts} starts, {} hits, {:?}", h.len(), t.elapsed());
            assert!(h.is_empty(), "{p}: {:?}", h.iter().map(|h| &h.captures["detail"]).collect::<Vec<_>>());
            files += 1;
        }
    }
    assert!(files > 0);
}
