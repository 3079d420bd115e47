"builtin.module"() ({
  "stable_mosaic.func.func"() ({
  ^bb0(%arg0: memref<32x128xf32, #tpu.memory_space<any>>, %arg1: memref<32x128xf32, #tpu.memory_space<vmem>>, %arg2: memref<2x8x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>):
    %0 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
    %1 = "stable_mosaic.arith.constant"() {value = 4 : i32} : () -> i32
    %2 = "stable_mosaic.arith.addi"(%0, %1) {overflowFlags = #arith.overflow<none>} : (i32, i32) -> i32
    %3 = "stable_mosaic.arith.constant"() {value = 1 : i32} : () -> i32
    "stable_mosaic.scf.for"(%0, %2, %3) ({
    ^bb0(%arg4: i32):
      %5 = "stable_mosaic.arith.constant"() {value = 2 : i32} : () -> i32
      %6 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %7 = "stable_mosaic.arith.cmpi"(%5, %6) {predicate = 0 : i64} : (i32, i32) -> i1
      %8 = "stable_mosaic.arith.constant"() {value = 1 : i32} : () -> i32
      %9 = "stable_mosaic.arith.select"(%7, %8, %5) : (i1, i32, i32) -> i32
      %10 = "stable_mosaic.arith.remsi"(%arg4, %9) : (i32, i32) -> i32
      %11 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %12 = "stable_mosaic.arith.cmpi"(%10, %11) {predicate = 1 : i64} : (i32, i32) -> i1
      %13 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %14 = "stable_mosaic.arith.cmpi"(%10, %13) {predicate = 2 : i64} : (i32, i32) -> i1
      %15 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %16 = "stable_mosaic.arith.cmpi"(%9, %15) {predicate = 2 : i64} : (i32, i32) -> i1
      %17 = "stable_mosaic.arith.xori"(%14, %16) : (i1, i1) -> i1
      %18 = "stable_mosaic.arith.andi"(%17, %12) : (i1, i1) -> i1
      %19 = "stable_mosaic.arith.addi"(%10, %9) {overflowFlags = #arith.overflow<none>} : (i32, i32) -> i32
      %20 = "stable_mosaic.arith.select"(%18, %19, %10) : (i1, i32, i32) -> i32
      %21 = "stable_mosaic.arith.constant"() {value = 8 : i32} : () -> i32
      %22 = "stable_mosaic.arith.muli"(%arg4, %21) {overflowFlags = #arith.overflow<none>} : (i32, i32) -> i32
      %23 = "stable_mosaic.tpu.memref_slice"(%arg3, %20) {operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>, i32) -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %24 = "stable_mosaic.tpu.memref_squeeze"(%23) : (memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %25 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %26 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %27 = "stable_mosaic.tpu.memref_slice"(%arg2, %20, %25, %26) {operandSegmentSizes = array<i32: 1, 3, 0>} : (memref<2x8x128xf32, #tpu.memory_space<vmem>>, i32, i32, i32) -> memref<1x8x128xf32, #tpu.memory_space<vmem>>
      %28 = "stable_mosaic.tpu.memref_squeeze"(%27) : (memref<1x8x128xf32, #tpu.memory_space<vmem>>) -> memref<8x128xf32, #tpu.memory_space<vmem>>
      %29 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %30 = "stable_mosaic.tpu.memref_slice"(%arg0, %22, %29) {operandSegmentSizes = array<i32: 1, 2, 0>} : (memref<32x128xf32, #tpu.memory_space<any>>, i32, i32) -> memref<8x128xf32, #tpu.memory_space<any>>
      "stable_mosaic.tpu.enqueue_dma"(%30, %28, %24) {operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 0>, priority = 0 : i32, strict_ordering = false} : (memref<8x128xf32, #tpu.memory_space<any>>, memref<8x128xf32, #tpu.memory_space<vmem>>, memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) -> ()
      %31 = "stable_mosaic.tpu.memref_slice"(%arg3, %20) {operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>, i32) -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %32 = "stable_mosaic.tpu.memref_squeeze"(%31) : (memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %33 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %34 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %35 = "stable_mosaic.tpu.memref_slice"(%arg2, %20, %33, %34) {operandSegmentSizes = array<i32: 1, 3, 0>} : (memref<2x8x128xf32, #tpu.memory_space<vmem>>, i32, i32, i32) -> memref<1x8x128xf32, #tpu.memory_space<vmem>>
      %36 = "stable_mosaic.tpu.memref_squeeze"(%35) : (memref<1x8x128xf32, #tpu.memory_space<vmem>>) -> memref<8x128xf32, #tpu.memory_space<vmem>>
      %37 = "stable_mosaic.arith.constant"() {value = 0 : i32} : () -> i32
      %38 = "stable_mosaic.tpu.memref_slice"(%arg0, %22, %37) {operandSegmentSizes = array<i32: 1, 2, 0>} : (memref<32x128xf32, #tpu.memory_space<any>>, i32, i32) -> memref<8x128xf32, #tpu.memory_space<any>>
      "stable_mosaic.tpu.wait_dma2"(%32, %38, %36) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, strict_ordering = false} : (memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>, memref<8x128xf32, #tpu.memory_space<any>>, memref<8x128xf32, #tpu.memory_space<vmem>>) -> ()
      %39 = "stable_mosaic.arith.index_cast"(%20) : (i32) -> index
      %40 = "stable_mosaic.arith.constant"() {value = 0 : index} : () -> index
      %41 = "stable_mosaic.arith.constant"() {value = 0 : index} : () -> index
      %42 = "stable_mosaic.vector.load"(%arg2, %39, %40, %41) : (memref<2x8x128xf32, #tpu.memory_space<vmem>>, index, index, index) -> vector<1x8x128xf32>
      %43 = "stable_mosaic.vector.shape_cast"(%42) : (vector<1x8x128xf32>) -> vector<8x128xf32>
      %44 = "stable_mosaic.arith.constant"() {value = 2.000000e+00 : f32} : () -> f32
      %45 = "stable_mosaic.vector.broadcast"(%44) : (f32) -> vector<8x128xf32>
      %46 = "stable_mosaic.arith.mulf"(%43, %45) {fastmath = #arith.fastmath<none>} : (vector<8x128xf32>, vector<8x128xf32>) -> vector<8x128xf32>
      %47 = "stable_mosaic.arith.constant"() {value = 8 : i32} : () -> i32
      %48 = "stable_mosaic.arith.muli"(%arg4, %47) {overflowFlags = #arith.overflow<none>} : (i32, i32) -> i32
      %49 = "stable_mosaic.arith.index_cast"(%48) : (i32) -> index
      %50 = "stable_mosaic.arith.constant"() {value = 0 : index} : () -> index
      %51 = "stable_mosaic.vector.load"(%arg1, %49, %50) : (memref<32x128xf32, #tpu.memory_space<vmem>>, index, index) -> vector<8x128xf32>
      "stable_mosaic.tpu.vector_store"(%46, %arg1, %49, %50) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<8x128xf32>, memref<32x128xf32, #tpu.memory_space<vmem>>, index, index) -> ()
      "stable_mosaic.scf.yield"() : () -> ()
    }) : (i32, i32, i32) -> ()
    %4 = "stable_mosaic.arith.constant"() {value = 4 : i32} : () -> i32
    "stable_mosaic.func.return"() : () -> ()
  }) {dimension_semantics = [], function_type = (memref<32x128xf32, #tpu.memory_space<any>>, memref<32x128xf32, #tpu.memory_space<vmem>>, memref<2x8x128xf32, #tpu.memory_space<vmem>>, memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) -> (), scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, sym_name = "dma_kernel", tpu.core_type = #tpu.core_type<tc>} : () -> ()
}) {stable_mosaic.version = 11 : i64} : () -> ()
