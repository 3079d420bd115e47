// Correct: a block copied page by page and waited for page by page (the pattern of tpu-inference's MLA
// `_fetch_bkv`). Grid step i's block has rows(i) = min(len[i], 32) rows (an SMEM table) in n(i) = ceil(rows / 8)
// pages of min(8, rows - 8p) rows, started by one loop and waited for by another of the same shape; step 0 starts
// its own block and every step but the last prefetches the next one's onto the other slot. No trip count is
// known: the prefetch loop of step i and the wait loop of step i + 1 are sums of one shape over equal values.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<8xi32, #tpu.memory_space<smem>>, %arg2: memref<256x128xbf16, #tpu.memory_space<hbm>>, %arg3: memref<2x32x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 8>, scalar_prefetch = 1 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}]} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %c7_i32 = arith.constant 7 : i32
    %c8_i32 = arith.constant 8 : i32
    %c32_i32 = arith.constant 32 : i32
    %slot = arith.remsi %arg0, %c2_i32 : i32
    %first = arith.cmpi eq, %arg0, %c0_i32 : i32
    scf.if %first {
      %idx_a = arith.index_cast %arg0 : i32 to index
      %len_a = memref.load %arg1[%idx_a] : memref<8xi32, #tpu.memory_space<smem>>
      %rows_a = arith.minsi %len_a, %c32_i32 : i32
      %up_a = arith.addi %rows_a, %c7_i32 : i32
      %n_a = arith.divsi %up_a, %c8_i32 : i32
      %base_a = arith.muli %arg0, %c32_i32 : i32
      %s_a = tpu.memref_slice %arg4[%slot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %ss_a = tpu.memref_squeeze %s_a : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      scf.for %p_a = %c0_i32 to %n_a step %c1_i32  : i32 {
        %lo_a = arith.muli %p_a, %c8_i32 : i32
        %left_a = arith.subi %rows_a, %lo_a : i32
        %sz_a = arith.minsi %left_a, %c8_i32 : i32
        %row_a = arith.addi %base_a, %lo_a : i32
        %src_a = tpu.memref_slice %arg2[%row_a, %c0_i32] <%sz_a> : memref<256x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
        %d3_a = tpu.memref_slice %arg3[%slot, %lo_a, %c0_i32] <%sz_a> : memref<2x32x128xbf16, #tpu.memory_space<vmem>> -> memref<1x?x128xbf16, #tpu.memory_space<vmem>>
        %dst_a = tpu.memref_squeeze %d3_a : memref<1x?x128xbf16, #tpu.memory_space<vmem>> -> memref<?x128xbf16, #tpu.memory_space<vmem>>
        tpu.enqueue_dma source(%src_a : memref<?x128xbf16, #tpu.memory_space<hbm>>) target(%dst_a : memref<?x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss_a : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      }
    }
    %next = arith.addi %arg0, %c1_i32 : i32
    %has_next = arith.cmpi slt, %next, %c8_i32 : i32
    scf.if %has_next {
      %other = arith.subi %c1_i32, %slot : i32
      %idx_b = arith.index_cast %next : i32 to index
      %len_b = memref.load %arg1[%idx_b] : memref<8xi32, #tpu.memory_space<smem>>
      %rows_b = arith.minsi %len_b, %c32_i32 : i32
      %up_b = arith.addi %rows_b, %c7_i32 : i32
      %n_b = arith.divsi %up_b, %c8_i32 : i32
      %base_b = arith.muli %next, %c32_i32 : i32
      %s_b = tpu.memref_slice %arg4[%other] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %ss_b = tpu.memref_squeeze %s_b : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      scf.for %p_b = %c0_i32 to %n_b step %c1_i32  : i32 {
        %lo_b = arith.muli %p_b, %c8_i32 : i32
        %left_b = arith.subi %rows_b, %lo_b : i32
        %sz_b = arith.minsi %left_b, %c8_i32 : i32
        %row_b = arith.addi %base_b, %lo_b : i32
        %src_b = tpu.memref_slice %arg2[%row_b, %c0_i32] <%sz_b> : memref<256x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
        %d3_b = tpu.memref_slice %arg3[%other, %lo_b, %c0_i32] <%sz_b> : memref<2x32x128xbf16, #tpu.memory_space<vmem>> -> memref<1x?x128xbf16, #tpu.memory_space<vmem>>
        %dst_b = tpu.memref_squeeze %d3_b : memref<1x?x128xbf16, #tpu.memory_space<vmem>> -> memref<?x128xbf16, #tpu.memory_space<vmem>>
        tpu.enqueue_dma source(%src_b : memref<?x128xbf16, #tpu.memory_space<hbm>>) target(%dst_b : memref<?x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss_b : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      }
    }
    %idx_c = arith.index_cast %arg0 : i32 to index
    %len_c = memref.load %arg1[%idx_c] : memref<8xi32, #tpu.memory_space<smem>>
    %rows_c = arith.minsi %len_c, %c32_i32 : i32
    %up_c = arith.addi %rows_c, %c7_i32 : i32
    %n_c = arith.divsi %up_c, %c8_i32 : i32
    %base_c = arith.muli %arg0, %c32_i32 : i32
    %s_c = tpu.memref_slice %arg4[%slot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss_c = tpu.memref_squeeze %s_c : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    scf.for %p_c = %c0_i32 to %n_c step %c1_i32  : i32 {
      %lo_c = arith.muli %p_c, %c8_i32 : i32
      %left_c = arith.subi %rows_c, %lo_c : i32
      %sz_c = arith.minsi %left_c, %c8_i32 : i32
      %row_c = arith.addi %base_c, %lo_c : i32
      %src_c = tpu.memref_slice %arg2[%row_c, %c0_i32] <%sz_c> : memref<256x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
      %d3_c = tpu.memref_slice %arg3[%slot, %lo_c, %c0_i32] <%sz_c> : memref<2x32x128xbf16, #tpu.memory_space<vmem>> -> memref<1x?x128xbf16, #tpu.memory_space<vmem>>
      %dst_c = tpu.memref_squeeze %d3_c : memref<1x?x128xbf16, #tpu.memory_space<vmem>> -> memref<?x128xbf16, #tpu.memory_space<vmem>>
      tpu.wait_dma2 semaphore(%ss_c : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%src_c : memref<?x128xbf16, #tpu.memory_space<hbm>>) dst(%dst_c : memref<?x128xbf16, #tpu.memory_space<vmem>>)
    }
    return
  }
}
