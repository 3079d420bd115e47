"""Makes the small MLIR bytecode files the bytecode reader's tests read.

Run with a Python that has jax 0.10.2 (CPU is enough), from this directory:
    python make.py
Writes, for each hand-written module below, `NAME.mlir` (the input text), `NAME.v0.mlirbc` (bytecode version 0,
what jax writes for Pallas kernels) and `NAME.v6.mlirbc` (the current version: properties, lazy-loadable
isolated regions, elided block-argument locations), `NAME.generic.mlir` (MLIR's own generic print of it, the tests' oracle), plus `pallas_dma.mlirbc`: the body of a small Pallas TPU
kernel with manual DMAs and semaphores, lowered for TPU on a CPU-only machine through `jax.export`, and
`pallas_dma.mlir`, its text as MLIR prints it after reading the bytecode (generic form: the body's ops are in
the `stable_mosaic` dialect).
"""
import base64
import io
import re

from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir

FEATURES = r'''
module @features attributes {test.unit, test.dict = {a = 1 : i32, b = "s\0A"}} {
  func.func private @callee(%a: i32) -> i32 {
    return %a : i32
  }
  func.func @main(%arg0: memref<4x8xf32, strided<[8, 1], offset: ?>, 1> {test.arg = true},
                  %arg1: vector<[4]x8xf16>, %arg2: tensor<?x3xf8E4M3FN>, %arg3: i32)
      -> (i32, f32) attributes {
        test.ints = array<i64: 1, -2, 3>, test.bools = array<i1: true, false>,
        test.floats = array<f32: 1.5, -0.25>, test.dense = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>,
        test.splat = dense<true> : vector<4xi1>, test.big = 12345678901234 : i64, test.neg = -7 : i8,
        test.uns = 200 : ui8, test.f64 = 0.1 : f64, test.bf = 1.0 : bf16, test.sym = @callee,
        test.nested = @a::@b, test.type = complex<f32>, test.tuple = tuple<i32, none>,
        test.fn = (i32, index) -> (), test.cplx = dense<(1.0, 2.0)> : tensor<complex<f32>>,
        test.map = affine_map<(d0, d1)[s0] -> (d1 + s0, d0 floordiv 2)>, test.umr = memref<*xf32>,
        test.ut = tensor<*xi16>, test.si = 3 : si16} {
    %c0 = arith.constant 0 : index loc("kernel.py":3:1)
    %c1 = arith.constant 1 : index loc("get"("kernel.py":4:5))
    %c4 = arith.constant 4 : index
    %init = arith.constant 0.0 : f32
    %sum:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init, %k = %c0) -> (f32, index) {
      %v = memref.load %arg0[%i, %k] : memref<4x8xf32, strided<[8, 1], offset: ?>, 1>
      %n = arith.addf %acc, %v : f32 loc(callsite(callsite("h.py":115:4 at "h.py":148:10) at callsite("h.py":115:4 at "h.py":148:10)))
      scf.yield %n, %i : f32, index
    } loc(callsite("for"("kernel.py":10:2) at "caller.py":20:4))
    %r = func.call @callee(%arg3) : (i32) -> i32 loc(fused["a.py":1:1, "b.py":2:2])
    cf.br ^bb2(%r : i32)
  ^bb1:
    %y = arith.addi %x, %x : i32 loc(callsite(callsite("h.py":181:12 at "h.py":508:8) at callsite("h.py":181:12 at "h.py":428:16)))
    return %y, %sum#0 : i32, f32
  ^bb2(%z: i32):
    %x = arith.muli %z, %z : i32
    %c = arith.cmpi slt, %z, %x : i32
    cf.cond_br %c, ^bb1, ^bb3
  ^bb3:
    return %z, %sum#0 : i32, f32
  }
}
'''

UNREGISTERED = r'''
module {
  func.func @graph(%a: i32) {
    "test.graph"(%a) ({
    ^bb0(%b: i32):
      %0 = "test.use"(%1) {note = "forward reference"} : (i32) -> i32
      %1 = "test.def"(%b) : (i32) -> i32
      "test.yield"(%0) : (i32) -> ()
    }) {test.attr = #test.opaque<"x">, test.t = !test.thing<3>} : (i32) -> ()
    return
  }
}
'''


def write(module, path, version=None):
    buf = io.BytesIO()
    if version is None:
        module.operation.write_bytecode(buf)
    else:
        module.operation.write_bytecode(buf, desired_version=version)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def hand_written():
    ctx = mlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        for name, text in (("features", FEATURES), ("unregistered", UNREGISTERED)):
            with open(f"{name}.mlir", "w") as f:
                f.write(text.lstrip())
            m = ir.Module.parse(text)
            write(m, f"{name}.v0.mlirbc", 0)
            write(m, f"{name}.v6.mlirbc")
            with open(f"{name}.generic.mlir", "w") as f:
                f.write(m.operation.get_asm(print_generic_op_form=True))


def pallas_dma():
    import functools
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def kernel(x_hbm, o_ref, buf, sem):
        def body(i, carry):
            slot = i % 2
            cp = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 8)], buf.at[slot], sem.at[slot])
            cp.start()
            cp.wait()
            o_ref[pl.ds(i * 8, 8), :] = buf[slot] * 2.0
            return carry
        jax.lax.fori_loop(0, 4, body, 0)

    @jax.jit
    def f(x):
        return pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],
            name="dma_kernel",
        )(x)

    exp = jax.export.export(f, platforms=["tpu"])(jax.ShapeDtypeStruct((32, 128), jnp.float32))
    text = exp.mlir_module()
    body = re.search(r'\\22body\\22: \\22([A-Za-z0-9+/=]+)\\22', text).group(1)
    raw = base64.b64decode(body)
    with open("pallas_dma.mlirbc", "wb") as f:
        f.write(raw)
    from jax._src.tpu_custom_call import tpu
    ctx = mlir.make_ir_context()
    tpu.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True
    with ctx:
        m = ir.Module.parse(raw)
        with open("pallas_dma.mlir", "w") as f:
            f.write(m.operation.get_asm(print_generic_op_form=True, enable_debug_info=False))


if __name__ == "__main__":
    hand_written()
    pallas_dma()
