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
