// Correct: a ring two blocks deep on one semaphore whose first blocks are started before the loop (tokamax's
// fused MoE decode does this with six slots). Blocks 0 and 1 are started before it (each when there is one);
// iteration i prefetches block i + 2 when there is one and waits for block i. The first two iterations take the
// blocks started before the loop, the later ones the prefetch of two iterations earlier.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<1xi32, #tpu.memory_space<smem>>, %arg2: memref<64x8x128xbf16, #tpu.memory_space<hbm>>, %arg3: memref<8x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1>, scalar_prefetch = 1 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}]} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %n = memref.load %arg1[%c0] : memref<1xi32, #tpu.memory_space<smem>>
    %one = arith.cmpi slt, %c0_i32, %n : i32
    scf.if %one {
      %b0 = tpu.memref_slice %arg2[%c0_i32, %c0_i32, %c0_i32] : memref<64x8x128xbf16, #tpu.memory_space<hbm>> -> memref<1x8x128xbf16, #tpu.memory_space<hbm>>
      %s0 = tpu.memref_squeeze %b0 : memref<1x8x128xbf16, #tpu.memory_space<hbm>> -> memref<8x128xbf16, #tpu.memory_space<hbm>>
      tpu.enqueue_dma source(%s0 : memref<8x128xbf16, #tpu.memory_space<hbm>>) target(%arg3 : memref<8x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%arg4 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    }
    %two = arith.cmpi slt, %c1_i32, %n : i32
    scf.if %two {
      %b1 = tpu.memref_slice %arg2[%c1_i32, %c0_i32, %c0_i32] : memref<64x8x128xbf16, #tpu.memory_space<hbm>> -> memref<1x8x128xbf16, #tpu.memory_space<hbm>>
      %s1 = tpu.memref_squeeze %b1 : memref<1x8x128xbf16, #tpu.memory_space<hbm>> -> memref<8x128xbf16, #tpu.memory_space<hbm>>
      tpu.enqueue_dma source(%s1 : memref<8x128xbf16, #tpu.memory_space<hbm>>) target(%arg3 : memref<8x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%arg4 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    }
    scf.for %i = %c0_i32 to %n step %c1_i32 : i32 {
      %j = arith.addi %i, %c2_i32 : i32
      %more = arith.cmpi slt, %j, %n : i32
      scf.if %more {
        %bj = tpu.memref_slice %arg2[%j, %c0_i32, %c0_i32] : memref<64x8x128xbf16, #tpu.memory_space<hbm>> -> memref<1x8x128xbf16, #tpu.memory_space<hbm>>
        %sj = tpu.memref_squeeze %bj : memref<1x8x128xbf16, #tpu.memory_space<hbm>> -> memref<8x128xbf16, #tpu.memory_space<hbm>>
        tpu.enqueue_dma source(%sj : memref<8x128xbf16, #tpu.memory_space<hbm>>) target(%arg3 : memref<8x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%arg4 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      }
      %bi = tpu.memref_slice %arg2[%i, %c0_i32, %c0_i32] : memref<64x8x128xbf16, #tpu.memory_space<hbm>> -> memref<1x8x128xbf16, #tpu.memory_space<hbm>>
      %si = tpu.memref_squeeze %bi : memref<1x8x128xbf16, #tpu.memory_space<hbm>> -> memref<8x128xbf16, #tpu.memory_space<hbm>>
      tpu.wait_dma2 semaphore(%arg4 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%si : memref<8x128xbf16, #tpu.memory_space<hbm>>) dst(%arg3 : memref<8x128xbf16, #tpu.memory_space<vmem>>)
    }
    return
  }
}
