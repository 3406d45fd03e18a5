(* calls_loop: OCaml twin of bench/calls/calls_loop.mn: a loop of calls to a
   small function. [@inline never]: ocamlopt would otherwise inline step, and
   there would be no call to measure (Minnow inlines nothing). *)

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

let[@inline never] step x = x + 3

let run n =
  let acc = ref 0 in
  for _ = 1 to n do acc := step !acc done;
  !acc

let () = Printf.printf "checksum: %d\n" (run (arg_int 1 50000000))
