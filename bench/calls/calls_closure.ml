(* calls_closure: OCaml twin of bench/calls/calls_closure.mn: a loop of calls to
   a closure reading a captured variable. Sys.opaque_identity hides which
   function the closure is, as Minnow's run(f, n) does not know it: the call
   goes through the closure (ocamlopt would otherwise call, or inline, the
   known function). *)

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

let adder k = fun x -> x + k

let run f n =
  let acc = ref 0 in
  for _ = 1 to n do acc := f !acc done;
  !acc

let () = Printf.printf "checksum: %d\n" (run (Sys.opaque_identity (adder 3)) (arg_int 1 40000000))
