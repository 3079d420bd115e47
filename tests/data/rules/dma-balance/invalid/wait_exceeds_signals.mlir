// Bug: only one half of the buffer is DMA'd, but the wait takes the whole 128x128 buffer's bytes: it blocks forever.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<1024x128xbf16, #tpu.memory_space<hbm>>, %arg2: memref<128x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<2x128x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 4>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}]} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %c8_i32 = arith.constant 8 : i32
    %c128_i32 = arith.constant 128 : i32
    %r9 = arith.muli %arg0, %c128_i32 : i32
    %src9 = tpu.memref_slice %arg1[%r9, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
    %t9 = tpu.memref_slice %arg3[%c0_i32, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
    %ts9 = tpu.memref_squeeze %t9 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
    %s9 = tpu.memref_slice %arg4[%c0_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss9 = tpu.memref_squeeze %s9 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %r10 = arith.muli %arg0, %c128_i32 : i32
    %src10 = tpu.memref_slice %arg1[%r10, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<64x128xbf16, #tpu.memory_space<hbm>>
    %t10 = tpu.memref_slice %arg3[%c0_i32, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x64x128xbf16, #tpu.memory_space<vmem>>
    %ts10 = tpu.memref_squeeze %t10 : memref<1x64x128xbf16, #tpu.memory_space<vmem>> -> memref<64x128xbf16, #tpu.memory_space<vmem>>
    %c64_i32 = arith.constant 64 : i32
    %src10b = tpu.memref_slice %arg1[%r10, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<64x128xbf16, #tpu.memory_space<hbm>>
    %t10b = tpu.memref_slice %arg3[%c0_i32, %c64_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x64x128xbf16, #tpu.memory_space<vmem>>
    %ts10b = tpu.memref_squeeze %t10b : memref<1x64x128xbf16, #tpu.memory_space<vmem>> -> memref<64x128xbf16, #tpu.memory_space<vmem>>
    %s10 = tpu.memref_slice %arg4[%c0_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss10 = tpu.memref_squeeze %s10 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    tpu.enqueue_dma source(%src10 : memref<64x128xbf16, #tpu.memory_space<hbm>>) target(%ts10 : memref<64x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss10 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    tpu.wait_dma2 semaphore(%ss9 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%src9 : memref<128x128xbf16, #tpu.memory_space<hbm>>) dst(%ts9 : memref<128x128xbf16, #tpu.memory_space<vmem>>)
    %si11 = arith.index_cast %c0_i32 : i32 to index
    %c0_11 = arith.constant 0 : index
    %x11 = vector.load %arg3[%si11, %c0_11, %c0_11] : memref<2x128x128xbf16, #tpu.memory_space<vmem>>, vector<1x128x128xbf16>
    %xs11 = vector.shape_cast %x11 : vector<1x128x128xbf16> to vector<128x128xbf16>
    %z11 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
    %m11 = tpu.matmul %xs11, %xs11, %z11 {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
    tpu.vector_store %arg2[%c0_11, %c0_11], %m11 {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>, 
    return
  }
  func.func @transform_1(%arg0: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %c0_i32 : i32, i32
  }
}
