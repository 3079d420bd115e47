// Bug: slot k%2 is read (and multiplied) before its DMA is waited.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<1024x128xbf16, #tpu.memory_space<hbm>>, %arg2: memref<128x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<2x128x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 2>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}]} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %c8_i32 = arith.constant 8 : i32
    %c128_i32 = arith.constant 128 : i32
    %c4_i32 = arith.constant 4 : i32
    %r23 = arith.muli %c0_i32, %c128_i32 : i32
    %src23 = tpu.memref_slice %arg1[%r23, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
    %t23 = tpu.memref_slice %arg3[%c0_i32, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
    %ts23 = tpu.memref_squeeze %t23 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
    %s23 = tpu.memref_slice %arg4[%c0_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss23 = tpu.memref_squeeze %s23 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    tpu.enqueue_dma source(%src23 : memref<128x128xbf16, #tpu.memory_space<hbm>>) target(%ts23 : memref<128x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss23 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    scf.for %k = %c0_i32 to %c4_i32 step %c1_i32 : i32 {
      %slot = arith.remsi %k, %c2_i32 : i32
      %k1 = arith.addi %k, %c1_i32 : i32
      %nslot = arith.remsi %k1, %c2_i32 : i32
      %has = arith.cmpi slt, %k1, %c4_i32 : i32
      scf.if %has {
        %r20 = arith.muli %k1, %c128_i32 : i32
        %src20 = tpu.memref_slice %arg1[%r20, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
        %t20 = tpu.memref_slice %arg3[%nslot, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
        %ts20 = tpu.memref_squeeze %t20 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
        %s20 = tpu.memref_slice %arg4[%nslot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
        %ss20 = tpu.memref_squeeze %s20 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
        tpu.enqueue_dma source(%src20 : memref<128x128xbf16, #tpu.memory_space<hbm>>) target(%ts20 : memref<128x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss20 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      }
      %si21 = arith.index_cast %slot : i32 to index
      %c0_21 = arith.constant 0 : index
      %x21 = vector.load %arg3[%si21, %c0_21, %c0_21] : memref<2x128x128xbf16, #tpu.memory_space<vmem>>, vector<1x128x128xbf16>
      %xs21 = vector.shape_cast %x21 : vector<1x128x128xbf16> to vector<128x128xbf16>
      %z21 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %m21 = tpu.matmul %xs21, %xs21, %z21 {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
      tpu.vector_store %arg2[%c0_21, %c0_21], %m21 {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>, 
      %r22 = arith.muli %k, %c128_i32 : i32
      %src22 = tpu.memref_slice %arg1[%r22, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
      %t22 = tpu.memref_slice %arg3[%slot, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
      %ts22 = tpu.memref_squeeze %t22 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
      %s22 = tpu.memref_slice %arg4[%slot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %ss22 = tpu.memref_squeeze %s22 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.wait_dma2 semaphore(%ss22 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%src22 : memref<128x128xbf16, #tpu.memory_space<hbm>>) dst(%ts22 : memref<128x128xbf16, #tpu.memory_space<vmem>>)
    }
    return
  }
  func.func @transform_1(%arg0: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %c0_i32 : i32, i32
  }
}
