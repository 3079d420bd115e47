// Correct: a DMA of a run-time number of rows (n, read from SMEM, clamped to [0, 128] and rounded down to a
// multiple of 8, which `tpu.assume_multiple` promises) and its wait, whose descriptor computes the same number
// another way (m - m % 8 instead of 8 * (m / 8)) with a promise of its own: a promise does not change a value, so
// the two sizes are equal for every n.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<1xi32, #tpu.memory_space<smem>>, %arg2: memref<1024x128xbf16, #tpu.memory_space<hbm>>, %arg3: memref<128x128xf32, #tpu.memory_space<vmem>>, %arg4: memref<128x128xbf16, #tpu.memory_space<vmem>>, %arg5: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 4>, scalar_prefetch = 1 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}]} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c8_i32 = arith.constant 8 : i32
    %c128_i32 = arith.constant 128 : i32
    %n = memref.load %arg1[%c0] : memref<1xi32, #tpu.memory_space<smem>>
    %lo = arith.maxsi %n, %c0_i32 : i32
    %m = arith.minsi %lo, %c128_i32 : i32
    %q = arith.divsi %m, %c8_i32 : i32
    %r = arith.muli %q, %c8_i32 : i32
    %rows = tpu.assume_multiple %r, 8 : i32
    %src = tpu.memref_slice %arg2[%c0_i32, %c0_i32] <%rows> : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
    %dst = tpu.memref_slice %arg4[%c0_i32, %c0_i32] <%rows> : memref<128x128xbf16, #tpu.memory_space<vmem>> -> memref<?x128xbf16, #tpu.memory_space<vmem>>
    tpu.enqueue_dma source(%src : memref<?x128xbf16, #tpu.memory_space<hbm>>) target(%dst : memref<?x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%arg5 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    %k = arith.remsi %m, %c8_i32 : i32
    %r2 = arith.subi %m, %k : i32
    %rows2 = tpu.assume_multiple %r2, 8 : i32
    %src2 = tpu.memref_slice %arg2[%c0_i32, %c0_i32] <%rows2> : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
    %dst2 = tpu.memref_slice %arg4[%c0_i32, %c0_i32] <%rows2> : memref<128x128xbf16, #tpu.memory_space<vmem>> -> memref<?x128xbf16, #tpu.memory_space<vmem>>
    tpu.wait_dma2 semaphore(%arg5 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%src2 : memref<?x128xbf16, #tpu.memory_space<hbm>>) dst(%dst2 : memref<?x128xbf16, #tpu.memory_space<vmem>>)
    %x = vector.load %arg4[%c0, %c0] : memref<128x128xbf16, #tpu.memory_space<vmem>>, vector<128x128xbf16>
    %z = arith.constant dense<0.000000e+00> : vector<128x128xf32>
    %y = tpu.matmul %x, %x, %z {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
    tpu.vector_store %arg3[%c0, %c0], %y {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>,
    return
  }
  func.func @transform_1(%arg0: i32, %arg1: memref<1xi32, #tpu.memory_space<smem>>) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %c0_i32 : i32, i32
  }
}
