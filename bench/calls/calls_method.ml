(* calls_method: OCaml twin of bench/calls/calls_method.mn: a loop of
   method-like calls, a closure read from a record's field and called with the
   record. Sys.opaque_identity: the record's function is not known where it is
   called, as in Minnow. *)

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

type counter = { step : counter -> int -> int; k : int }

let counter k = { step = (fun self x -> x + self.k); k }

let run obj n =
  let acc = ref 0 in
  for _ = 1 to n do acc := obj.step obj !acc done;
  !acc

let () = Printf.printf "checksum: %d\n" (run (Sys.opaque_identity (counter 3)) (arg_int 1 30000000))
