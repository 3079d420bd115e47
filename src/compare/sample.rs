//! A hand-made comparison for the renderers' tests: two targets, two versions each, one kernel, a timeline, and
//! strings that need escaping in every format.

use super::kernels::LoopName;
use super::*;
use crate::perf::timeline::{Lane, LaneMarks, Mark};

fn column(version: &str, target: &str, compute: f64, memory: f64) -> Column {
    Column {
        dir: format!("dumps/{version}@{target}"),
        version: version.into(),
        target: target.into(),
        verdicts: Verdicts::default(),
        time: Some(TimeSplit::of(1e-6, compute, memory)),
        untimed: None,
    }
}

pub fn timeline() -> Timeline {
    let mark = |offset, op: &str| Mark { offset, ops: vec![op.to_string()] };
    Timeline {
        region: "region95".into(),
        level: 2,
        start: 0x59,
        end: 0x68,
        bundles: 16,
        mxu_ops: 2,
        lanes: vec![
            LaneMarks { lane: Lane::DmaIssue, marks: vec![mark(1, "dma.hbm_to_vmem")] },
            LaneMarks { lane: Lane::DmaWait, marks: vec![mark(3, "dma.done.wait")] },
            LaneMarks { lane: Lane::Mxu, marks: vec![mark(5, "vmatmul.mubr.f8e4m3fn.mxu0"), mark(6, "vmatres<&>")] },
        ],
        inner_loops: vec![],
    }
}

pub fn comparison() -> Comparison {
    let mut columns = vec![
        column("v1", "tpu7x", 4e-6, 2e-6),
        column("v2", "tpu7x", 3e-6, 3.5e-6),
        column("v1", "v6e", 8e-6, 2e-6),
        column("bug<script>", "v6e", 1e-5, 1e-6),
    ];
    columns[1].verdicts =
        Verdicts { warnings: 1, rules: vec!["DM003".into()], packs: Some("v2-dma".into()), ..Verdicts::default() };
    columns[3].time = None;
    columns[3].verdicts = Verdicts { errors: 2, rules: vec!["MO021".into(), "FP001".into()], ..Verdicts::default() };
    let rows = vec![
        Row {
            group: "kernel".into(),
            label: "name".into(),
            cells: vec![
                Cell::text("fp8_mm_v1"),
                Cell::text("fp8_mm_v2"),
                Cell::text("fp8_mm_v1"),
                Cell::text("k|\"a,b\"\n<b>&amp;</b>"),
            ],
            detail: false,
        },
        Row {
            group: "matmul".into(),
            label: "MXU format".into(),
            cells: vec![
                Cell::text("native fp8").tone(Tone::Good),
                Cell::text("native fp8").tone(Tone::Good),
                Cell::text("upcast bf16").tone(Tone::Warn),
                Cell::text("unknown").note("a <b>reason</b>"),
            ],
            detail: false,
        },
        Row {
            group: "matmul".into(),
            label: "FLOPs".into(),
            detail: true,
            cells: vec![
                Cell::number("268 M", 2.68e8),
                Cell::number("268 M", 2.68e8),
                Cell::number("268 M", 2.68e8),
                Cell::absent(),
            ],
        },
    ];
    let timelines = vec![Some(timeline()), None, Some(timeline()), None];
    // a second kernel in one version only: the compilation's time is then not one kernel's
    let copy = Row {
        group: "kernel".into(),
        label: "name".into(),
        cells: vec![Cell::absent(), Cell::text("copy"), Cell::absent(), Cell::absent()],
        detail: false,
    };
    // v1@tpu7x's loops: the grid (two pipeline stages over its 16 steps), the loop the timeline shows, and one of
    // the compiler's own
    let named = |region: &str, level, trips: &str, name: Option<&str>| LoopName {
        region: region.into(),
        level,
        trips: trips.into(),
        name: name.map(Into::into),
        python: name.map(|_| "/src/<k>.py:98".into()),
        note: None,
    };
    let v1_loops = vec![
        LoopName {
            note: Some("16 grid steps + 2 pipeline stage(s) libtpu adds".into()),
            ..named("region170", 1, "18", Some("grid of <k>.py:98"))
        },
        named("region95", 2, "4", Some("loop at <k>.py:163")),
        named("region12", 1, "1", None),
    ];
    let loops = vec![v1_loops, vec![], vec![], vec![]];
    let kernels = vec![
        KernelSlot { title: "kernel 1".into(), rows, timelines, loops },
        KernelSlot { title: "copy".into(), rows: vec![copy], timelines: vec![None; 4], loops: vec![vec![]; 4] },
    ];
    let rankings = rank::rank(&columns);
    Comparison { columns, kernels, rankings, notes: vec!["hardware: built-in table".into()] }
}
