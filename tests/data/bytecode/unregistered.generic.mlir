"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (), sym_name = "graph"}> ({
  ^bb0(%arg0: i32):
    "test.graph"(%arg0) ({
    ^bb0(%arg1: i32):
      %0 = "test.use"(%1) {note = "forward reference"} : (i32) -> i32
      %1 = "test.def"(%arg1) : (i32) -> i32
      "test.yield"(%0) : (i32) -> ()
    }) {test.attr = #test.opaque<"x">, test.t = !test.thing<3>} : (i32) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
