// Bug (bug_single_slot): one buffer slot; block k+1 is copied into the buffer the compute of block k reads.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<1024x128xbf16, #tpu.memory_space<hbm>>, %arg2: memref<128x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<1x128x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 2>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}]} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %c8_i32 = arith.constant 8 : i32
    %c128_i32 = arith.constant 128 : i32
    %c4_i32 = arith.constant 4 : i32
    %r19 = arith.muli %c0_i32, %c128_i32 : i32
    %src19 = tpu.memref_slice %arg1[%r19, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
    %t19 = tpu.memref_slice %arg3[%c0_i32, %c0_i32, %c0_i32] : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
    %ts19 = tpu.memref_squeeze %t19 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
    %s19 = tpu.memref_slice %arg4[%c0_i32] : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss19 = tpu.memref_squeeze %s19 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    tpu.enqueue_dma source(%src19 : memref<128x128xbf16, #tpu.memory_space<hbm>>) target(%ts19 : memref<128x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss19 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    scf.for %k = %c0_i32 to %c4_i32 step %c1_i32 : i32 {
      %k1 = arith.addi %k, %c1_i32 : i32
      %has = arith.cmpi slt, %k1, %c4_i32 : i32
      %r16 = arith.muli %k, %c128_i32 : i32
      %src16 = tpu.memref_slice %arg1[%r16, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
      %t16 = tpu.memref_slice %arg3[%c0_i32, %c0_i32, %c0_i32] : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
      %ts16 = tpu.memref_squeeze %t16 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
      %s16 = tpu.memref_slice %arg4[%c0_i32] : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %ss16 = tpu.memref_squeeze %s16 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.wait_dma2 semaphore(%ss16 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%src16 : memref<128x128xbf16, #tpu.memory_space<hbm>>) dst(%ts16 : memref<128x128xbf16, #tpu.memory_space<vmem>>)
      scf.if %has {
        %r17 = arith.muli %k1, %c128_i32 : i32
        %src17 = tpu.memref_slice %arg1[%r17, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
        %t17 = tpu.memref_slice %arg3[%c0_i32, %c0_i32, %c0_i32] : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
        %ts17 = tpu.memref_squeeze %t17 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
        %s17 = tpu.memref_slice %arg4[%c0_i32] : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
        %ss17 = tpu.memref_squeeze %s17 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
        tpu.enqueue_dma source(%src17 : memref<128x128xbf16, #tpu.memory_space<hbm>>) target(%ts17 : memref<128x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss17 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      }
      %si18 = arith.index_cast %c0_i32 : i32 to index
      %c0_18 = arith.constant 0 : index
      %x18 = vector.load %arg3[%si18, %c0_18, %c0_18] : memref<1x128x128xbf16, #tpu.memory_space<vmem>>, vector<1x128x128xbf16>
      %xs18 = vector.shape_cast %x18 : vector<1x128x128xbf16> to vector<128x128xbf16>
      %z18 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %m18 = tpu.matmul %xs18, %xs18, %z18 {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
      tpu.vector_store %arg2[%c0_18, %c0_18], %m18 {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>, 
    }
    return
  }
  func.func @transform_1(%arg0: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %c0_i32 : i32, i32
  }
}
