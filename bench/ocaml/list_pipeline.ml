(* list_pipeline: OCaml twin of bench/programs/list_pipeline.mn (same algorithm, same output).
   The standard library's List.map (not tail-recursive, as Minnow's), List.filter and
   List.fold_left, with fresh closures each round. *)

let p = 1000000007

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

let () =
  let n = arg_int 1 10000 in
  let reps = arg_int 2 300 in
  let xs = List.init n (fun i -> i) in
  let total = ref 0 in
  for k = 0 to reps - 1 do
    let ys = List.map (fun x -> x * 3 + k) xs in
    let zs = List.filter (fun x -> x mod 2 = 0) ys in
    let ws = List.map (fun x -> x / 2 + 1) zs in
    let s = List.fold_left (fun acc x -> (acc + x) mod p) 0 ws in
    total := (!total * 31 + s) mod p
  done;
  Printf.printf "checksum: %d\n" !total
