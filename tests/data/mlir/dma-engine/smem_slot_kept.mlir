// Correct: the grid-step pipeline of smem_slot.mlir with its slot at place 0 of a two-place SMEM scratch, and a
// loop in every step that stores only place 1 (a counter beside the slot). The slot read after the loop is the one
// the step started with: a loop keeps the places of a buffer it never stores to, when it stores only at places it
// names.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<8x8x128xbf16, #tpu.memory_space<hbm>>, %arg2: memref<2x8x128xbf16, #tpu.memory_space<vmem>>, %arg3: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>, %arg4: memref<2xi32, #tpu.memory_space<smem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 8>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}]} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c8_i32 = arith.constant 8 : i32
    %first = arith.cmpi eq, %arg0, %c0_i32 : i32
    scf.if %first {
      memref.store %c0_i32, %arg4[%c0] : memref<2xi32, #tpu.memory_space<smem>>
      %b0 = tpu.memref_slice %arg1[%c0_i32, %c0_i32, %c0_i32] : memref<8x8x128xbf16, #tpu.memory_space<hbm>> -> memref<1x8x128xbf16, #tpu.memory_space<hbm>>
      %s0 = tpu.memref_squeeze %b0 : memref<1x8x128xbf16, #tpu.memory_space<hbm>> -> memref<8x128xbf16, #tpu.memory_space<hbm>>
      %d0 = tpu.memref_slice %arg2[%c0_i32, %c0_i32, %c0_i32] : memref<2x8x128xbf16, #tpu.memory_space<vmem>> -> memref<1x8x128xbf16, #tpu.memory_space<vmem>>
      %t0 = tpu.memref_squeeze %d0 : memref<1x8x128xbf16, #tpu.memory_space<vmem>> -> memref<8x128xbf16, #tpu.memory_space<vmem>>
      %m0 = tpu.memref_slice %arg3[%c0_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %q0 = tpu.memref_squeeze %m0 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.enqueue_dma source(%s0 : memref<8x128xbf16, #tpu.memory_space<hbm>>) target(%t0 : memref<8x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%q0 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    }
    %c1 = arith.constant 1 : index
    scf.for %i = %c0_i32 to %c8_i32 step %c1_i32 : i32 {
      memref.store %i, %arg4[%c1] : memref<2xi32, #tpu.memory_space<smem>>
    }
    %slot = memref.load %arg4[%c0] : memref<2xi32, #tpu.memory_space<smem>>
    %next = arith.addi %arg0, %c1_i32 : i32
    %more = arith.cmpi slt, %next, %c8_i32 : i32
    scf.if %more {
      %other = arith.subi %c1_i32, %slot : i32
      %b1 = tpu.memref_slice %arg1[%next, %c0_i32, %c0_i32] : memref<8x8x128xbf16, #tpu.memory_space<hbm>> -> memref<1x8x128xbf16, #tpu.memory_space<hbm>>
      %s1 = tpu.memref_squeeze %b1 : memref<1x8x128xbf16, #tpu.memory_space<hbm>> -> memref<8x128xbf16, #tpu.memory_space<hbm>>
      %d1 = tpu.memref_slice %arg2[%other, %c0_i32, %c0_i32] : memref<2x8x128xbf16, #tpu.memory_space<vmem>> -> memref<1x8x128xbf16, #tpu.memory_space<vmem>>
      %t1 = tpu.memref_squeeze %d1 : memref<1x8x128xbf16, #tpu.memory_space<vmem>> -> memref<8x128xbf16, #tpu.memory_space<vmem>>
      %m1 = tpu.memref_slice %arg3[%other] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %q1 = tpu.memref_squeeze %m1 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.enqueue_dma source(%s1 : memref<8x128xbf16, #tpu.memory_space<hbm>>) target(%t1 : memref<8x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%q1 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      memref.store %other, %arg4[%c0] : memref<2xi32, #tpu.memory_space<smem>>
    }
    %bw = tpu.memref_slice %arg1[%arg0, %c0_i32, %c0_i32] : memref<8x8x128xbf16, #tpu.memory_space<hbm>> -> memref<1x8x128xbf16, #tpu.memory_space<hbm>>
    %sw = tpu.memref_squeeze %bw : memref<1x8x128xbf16, #tpu.memory_space<hbm>> -> memref<8x128xbf16, #tpu.memory_space<hbm>>
    %dw = tpu.memref_slice %arg2[%slot, %c0_i32, %c0_i32] : memref<2x8x128xbf16, #tpu.memory_space<vmem>> -> memref<1x8x128xbf16, #tpu.memory_space<vmem>>
    %tw = tpu.memref_squeeze %dw : memref<1x8x128xbf16, #tpu.memory_space<vmem>> -> memref<8x128xbf16, #tpu.memory_space<vmem>>
    %mw = tpu.memref_slice %arg3[%slot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %qw = tpu.memref_squeeze %mw : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    tpu.wait_dma2 semaphore(%qw : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%sw : memref<8x128xbf16, #tpu.memory_space<hbm>>) dst(%tw : memref<8x128xbf16, #tpu.memory_space<vmem>>)
    return
  }
}
