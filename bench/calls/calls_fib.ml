(* calls_fib: OCaml twin of bench/calls/calls_fib.mn: doubly recursive Fibonacci. *)

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

let rec fib n = if n < 2 then n else fib (n - 1) + fib (n - 2)

let () = Printf.printf "checksum: %d\n" (fib (arg_int 1 35))
