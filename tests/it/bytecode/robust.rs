//! Robustness: truncated, bit-flipped and hand-made hostile bytecode gives an error, never a panic or a stack
//! overflow.

use super::*;

fn decode_fully(bytes: &[u8]) -> Result<usize, BytecodeError> {
    let d = bytecode::decode(bytes)?;
    let m = d.module();
    Ok(render_module(&m).len() + m.ops.len())
}

fn bodies() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> =
        ["pallas_dma.mlirbc", "features.v0.mlirbc", "features.v6.mlirbc", "unregistered.v6.mlirbc"]
            .iter()
            .map(|n| (n.to_string(), read(n)))
            .collect();
    if let Some(dir) = corpus() {
        let text = std::fs::read_to_string(dir.join("pallas_matmul@v5e/stablehlo.mlir")).unwrap_or_default();
        for cfg in backend_configs(&text) {
            let k = bytecode::kernel_from_backend_config(&cfg).unwrap().unwrap();
            let _ = k;
            let json = cfg.replace("\\22", "\"");
            let start = json.find("\"body\": \"").unwrap() + 9;
            let end = start + json[start..].find('"').unwrap();
            use base64::Engine;
            out.push((
                "corpus matmul".into(),
                base64::engine::general_purpose::STANDARD.decode(&json[start..end]).unwrap(),
            ));
        }
    }
    out
}

fn no_panic(what: &str, bytes: &[u8]) {
    let r = std::panic::catch_unwind(|| decode_fully(bytes));
    assert!(r.is_ok(), "decoder panicked on {what}");
}

#[test]
fn truncations_never_panic() {
    bytecode::with_decoder_stack(truncations);
}

fn truncations() {
    for (name, body) in bodies() {
        assert!(decode_fully(&body).is_ok(), "{name} decodes");
        for n in 0..body.len() {
            no_panic(&format!("{name} truncated to {n} bytes"), &body[..n]);
            assert!(bytecode::decode(&body[..n]).is_err(), "{name} truncated to {n} bytes should not decode");
        }
    }
}

#[test]
fn bit_flips_and_random_corruption_never_panic() {
    bytecode::with_decoder_stack(bit_flips);
}

fn bit_flips() {
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut runs = 0;
    for (name, body) in bodies() {
        // Every single-bit flip of the first 300 bytes (headers, strings, dialects, offsets), then random ones.
        for i in 0..body.len().min(300) {
            for bit in 0..8 {
                let mut b = body.clone();
                b[i] ^= 1 << bit;
                no_panic(&format!("{name} with bit {bit} of byte {i} flipped"), &b);
                runs += 1;
            }
        }
        for k in 0..1500 {
            let mut b = body.clone();
            for _ in 0..1 + rand() % 4 {
                let i = (rand() % b.len() as u64) as usize;
                b[i] = match rand() % 3 {
                    0 => b[i] ^ (1 << (rand() % 8)),
                    1 => (rand() & 0xff) as u8,
                    _ => [0u8, 0xff, 0x01, 0x80][(rand() % 4) as usize],
                };
            }
            no_panic(&format!("{name} random corruption #{k}"), &b);
            runs += 1;
        }
    }
    assert!(runs > 10_000);
}

/// A tiny bytecode writer for hand-made hostile inputs: version 0, strings ["builtin", "test", "op"], dialects
/// [builtin, test], one op name `test.op`, one attribute (UnknownLoc), and the IR section given.
fn synthetic(version: u8, ir: &[u8], extra_sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
    synthetic_attrs(version, &[vec![0x1f]], ir, extra_sections)
}

/// The same with the given builtin attribute encodings (attribute 0 is the ops' location).
fn synthetic_attrs(version: u8, attrs: &[Vec<u8>], ir: &[u8], extra_sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
    fn varint(v: u64) -> Vec<u8> {
        if v < 128 {
            return vec![((v << 1) | 1) as u8];
        }
        let mut out = vec![0u8];
        out.extend_from_slice(&v.to_le_bytes());
        out
    }
    fn section(id: u8, data: &[u8]) -> Vec<u8> {
        let mut out = vec![id];
        out.extend(varint(data.len() as u64));
        out.extend_from_slice(data);
        out
    }
    let strings = ["builtin", "test", "op"];
    let mut s = varint(strings.len() as u64);
    for st in strings.iter().rev() {
        s.extend(varint(st.len() as u64 + 1));
    }
    for st in strings {
        s.extend_from_slice(st.as_bytes());
        s.push(0);
    }
    let mut dialects = varint(2);
    dialects.extend(varint(0));
    dialects.extend(varint(1));
    dialects.extend(varint(1)); // op group: dialect `test`
    dialects.extend(varint(1)); // one name
    dialects.extend(varint(2)); // "op"
    let attr_data: Vec<u8> = attrs.concat();
    let mut offsets = varint(attrs.len() as u64);
    offsets.extend(varint(0));
    offsets.extend(varint(0)); // group: dialect builtin
    offsets.extend(varint(attrs.len() as u64));
    for a in attrs {
        offsets.extend(varint(((a.len() as u64) << 1) | 1));
    }
    let mut out = b"ML\xefR".to_vec();
    out.push((version << 1) | 1);
    out.extend_from_slice(b"test\0");
    out.extend(section(0, &s));
    out.extend(section(1, &dialects));
    out.extend(section(2, &attr_data));
    out.extend(section(3, &offsets));
    out.extend(section(4, ir));
    for (id, data) in extra_sections {
        out.extend(section(*id, data));
    }
    out
}

#[test]
fn synthetic_minimal_module_decodes() {
    // Top block: one op `test.op` (mask 0, location 0).
    let d = bytecode::decode(&synthetic(0, &[0x05, 0x01, 0x00, 0x01], &[])).unwrap();
    assert_eq!(d.written_op_names(), vec!["test.op"]);
    assert!(d.notes.iter().any(|n| n.contains("not a function")));
}

#[test]
fn deep_region_nesting_is_an_error_not_a_stack_overflow() {
    // op with one region (mask 0x10, regions (1 << 1) | 0 = varint 0x05) → region: 1 block, 0 values → block of 1 op → ...
    let depth = 100_000;
    let mut ir = vec![0x05];
    for _ in 0..depth {
        ir.extend_from_slice(&[0x01, 0x10, 0x01, 0x05, 0x03, 0x01, 0x05]);
    }
    ir.extend_from_slice(&[0x01, 0x00, 0x01]);
    let e = bytecode::decode(&synthetic(0, &ir, &[])).unwrap_err();
    assert!(e.to_string().contains("nested deeper"), "{e}");
}

#[test]
fn deep_attribute_nesting_is_an_error_not_a_stack_overflow() {
    // Attribute i is an array holding attribute i + 1, 5000 deep.
    let n = 5000u64;
    let varint2 = |v: u64| -> Vec<u8> {
        if v < 128 {
            vec![((v << 1) | 1) as u8]
        } else {
            let mut out = vec![0u8];
            out.extend_from_slice(&v.to_le_bytes());
            out
        }
    };
    let mut attrs: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut a = vec![0x01, 0x03]; // ArrayAttr, one element
            a.extend(varint2(i + 1));
            a
        })
        .collect();
    attrs.push(vec![0x1f]);
    let e = bytecode::decode(&synthetic_attrs(0, &attrs, &[0x05, 0x01, 0x00, 0x01], &[])).unwrap_err();
    assert!(e.to_string().contains("nested deeper"), "{e}");
}

#[test]
fn corrupt_inputs_give_clear_errors() {
    let good = synthetic(0, &[0x05, 0x01, 0x00, 0x01], &[]);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", Vec::new(), "magic"),
        ("wrong magic", b"MLIR\x01x\0".to_vec(), "magic"),
        ("future version", synthetic(7, &[0x05, 0x01, 0x00, 0x01], &[]), "version 7"),
        ("unknown section", synthetic(0, &[0x05, 0x01, 0x00, 0x01], &[(12, vec![1, 2])]), "unknown section id 12"),
        (
            "duplicate section",
            synthetic(0, &[0x05, 0x01, 0x00, 0x01], &[(4, vec![0x05, 0x01, 0x00, 0x01])]),
            "duplicate IR section",
        ),
        ("unknown op name", synthetic(0, &[0x05, 0x09, 0x00, 0x01], &[]), "operation name index 4 out of range"),
        ("bad attribute index", synthetic(0, &[0x05, 0x01, 0x00, 0x0b], &[]), "attribute index 5 out of range"),
        (
            "operand out of range",
            synthetic(0, &[0x05, 0x01, 0x04, 0x01, 0x03, 0x01], &[]),
            "operand value 0 out of range",
        ),
        (
            "huge count",
            synthetic(0, &[0x05, 0x01, 0x02, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], &[]),
            "result count",
        ),
        ("truncated", good[..good.len() - 2].to_vec(), "malformed"),
    ];
    for (what, bytes, expect) in cases {
        let e = bytecode::decode(&bytes).expect_err(what).to_string();
        assert!(e.contains(expect), "{what}: `{e}` should mention `{expect}`");
    }
}
